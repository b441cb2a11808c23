package dev.distlock.interceptor;

import java.util.List;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;

/**
 * Interrupts the thread running a blocking locked method when one of its leases is lost by its {@code maxHold}
 * ({@link LockLostEvent.Detection#MAX_HOLD_EXCEEDED}), only while the method runs: the loss is told on an engine
 * thread, and {@link #returned()} closes the window under the same monitor, so a loss told after the method returned
 * never interrupts whatever the thread does next. Other losses interrupt nothing (they are reported at release, as
 * always). A lease whose engine cannot tell its holder of a loss is reported at release only.
 */
final class MaxHoldInterrupt {

	private final Thread thread;

	private boolean running = true;

	private MaxHoldInterrupt(Thread thread) {
		this.thread = thread;
	}

	/** Watch {@code leases} for a loss by their longest hold, on behalf of the current thread. */
	static MaxHoldInterrupt watch(List<Lease> leases) {
		MaxHoldInterrupt interrupt = new MaxHoldInterrupt(Thread.currentThread());
		for (Lease lease : leases) {
			try {
				lease.onLost(interrupt::lost);
			}
			catch (UnsupportedOperationException ex) {
				// the engine cannot tell the holder: the loss is reported at release
			}
		}
		return interrupt;
	}

	private synchronized void lost(LockLostEvent event) {
		if (this.running && event.detection() == LockLostEvent.Detection.MAX_HOLD_EXCEEDED) {
			this.thread.interrupt();
		}
	}

	/** The method returned (or threw): no loss interrupts the thread from now on. */
	synchronized void returned() {
		this.running = false;
	}

}
