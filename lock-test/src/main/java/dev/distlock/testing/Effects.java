package dev.distlock.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * What an operation on the store causes outside the store's monitor: listener calls, the completion of waiting
 * acquisitions, events. Collected while the monitor is held and run after it was left, so that no code of a caller
 * (a listener, a future's dependent stage) ever runs under the monitor, and none can block the engine.
 * <p>
 * Not thread-safe: one per operation, filled and run by the thread that made it.
 */
final class Effects {

	private final List<Runnable> actions = new ArrayList<>();

	/** Whether a waiter's state changed, so that blocked threads must be woken. */
	private boolean wake;

	void add(Runnable action) {
		this.actions.add(action);
	}

	/** {@return whether nothing is to run and nobody to wake}: a thread may then wait under the monitor. */
	boolean isQuiet() {
		return this.actions.isEmpty() && !this.wake;
	}

	/** A waiter was granted its key or ended: the blocked threads are woken before the monitor is left. */
	void wakeWaiters() {
		this.wake = true;
	}

	/** {@return whether blocked threads must be woken}, and forget it. */
	boolean takeWake() {
		boolean woken = this.wake;
		this.wake = false;
		return woken;
	}

	/**
	 * Run every action in order. What one throws (a listener that breaks its contract) is logged and does not keep the
	 * next from running, nor fail the operation, whose outcome is decided already: a lease granted is still returned.
	 */
	void run() {
		List<Runnable> taken = List.copyOf(this.actions);
		this.actions.clear();
		taken.forEach((action) -> CallbackThreads.runLogged(action, "a listener"));
	}

}
