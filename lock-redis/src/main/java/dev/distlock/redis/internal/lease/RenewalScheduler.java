package dev.distlock.redis.internal.lease;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.core.LockLostEvent;
import dev.distlock.redis.internal.support.EngineThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The one renewal scheduler of both engines: one thread that looks at the leases a service holds when the earliest of
 * them needs it, and in each pass, lease by lease, gives up the leases held for their longest hold first
 * ({@link LeaseRecord#isMaxHoldReached}: lost as {@code MAX_HOLD_EXCEEDED}, whatever their renewals did), then the
 * leases the clock has given up, then claims the renewals that are due, and hands those to its engine's
 * {@link Renewer}. What differs between the engines is the renewer's: when a lease is due, when the clock gives it up
 * (the single-node engine waits for a renewal on its way; Redlock counts a quorum within its validity), and how the
 * renewals go out (the single-node engine's batches per store on their own threads; Redlock's per-node batches, on
 * this thread, judged on a quorum).
 * <p>
 * Invariants: only the scheduler thread runs passes, so a lease is claimed for a renewal at most once at a time (the
 * renewer's claim says so until the result is applied); a lease leaves the scheduler once it is no longer HELD. A
 * registration either is seen by the pass running or sees {@code scanning} (or a planned wake-up later than its first
 * check) and wakes the scheduler, so no new lease waits past its first renewal.
 */
public final class RenewalScheduler<E extends LeaseRecord> implements AutoCloseable {

	/** What an engine does with the leases its scheduler looks at; called on the scheduler thread. */
	public interface Renewer<E extends LeaseRecord> {

		/** {@return how long the scheduler sleeps at most between passes} */
		long maxSleepNanos();

		/** A pass over {@code leases} starts at {@code nowNanos}. */
		void passStarting(Set<E> leases, long nowNanos);

		/** {@return whether the clock gives up {@code lease} at {@code nowNanos} (its cap was checked before)} */
		boolean isLostByClock(E lease, long nowNanos);

		/** The clock gave {@code lease} up: end it (as lost, or as expired) and say so. */
		void lostByClock(E lease);

		/** The scheduler marked {@code lease} lost ({@code MAX_HOLD_EXCEEDED}): announce {@code event}. */
		void lost(E lease, LockLostEvent event);

		/** {@return whether a renewal of {@code lease} is claimed now, to be sent in this pass's round} */
		boolean claim(E lease, long nowNanos);

		/** {@return the earlier of {@code nextNanos} and when the scheduler must look at {@code lease} again} */
		long nextCheckNanos(E lease, boolean claimed, long nextNanos);

		/** Send the renewals of {@code due}; {@return the earlier of {@code nextNanos} and the next look they need} */
		long renew(List<E> due, long nextNanos);

	}

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.RenewalScheduler");

	/** After a pass that failed unexpectedly, the next one comes this much later. */
	private static final long FAILED_PASS_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final Renewer<E> renewer;

	private final Set<E> leases = ConcurrentHashMap.newKeySet();

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition changed = this.lock.newCondition();

	private final Thread thread;

	/** Guarded by {@link #lock}. */
	private boolean dirty;

	private volatile long plannedWakeNanos;

	/** True from the start of a pass until its next wake-up is planned (see the class comment). */
	private volatile boolean scanning;

	private volatile boolean running = true;

	public RenewalScheduler(Renewer<E> renewer, EngineThreads threads, String threadName) {
		this.renewer = renewer;
		this.thread = threads.newThread(threadName, this::run);
		this.plannedWakeNanos = System.nanoTime() + renewer.maxSleepNanos();
		this.thread.start();
	}

	/** Start watching a newly acquired lease: renew it if it is auto-renewed, end it when its time runs out. */
	public void register(E lease) {
		this.leases.add(lease);
		long firstCheck = this.renewer.nextCheckNanos(lease, false, this.plannedWakeNanos);
		if (this.scanning || firstCheck - this.plannedWakeNanos < 0) {
			wakeUp();
		}
	}

	/** Stop watching a lease that was released. */
	public void unregister(E lease) {
		this.leases.remove(lease);
	}

	/** Pass over the leases now, e.g. after a re-entry turned a fixed lease into a renewed one, or a renewal ended. */
	public void wakeUp() {
		this.lock.lock();
		try {
			this.dirty = true;
			this.changed.signal();
		}
		finally {
			this.lock.unlock();
		}
	}

	public int size() {
		return this.leases.size();
	}

	private void run() {
		while (this.running) {
			long next;
			try {
				this.scanning = true;
				next = pass(System.nanoTime());
			}
			catch (RuntimeException | Error ex) {
				logger.error("Lock watchdog pass failed; continuing", ex);
				next = System.nanoTime() + FAILED_PASS_PAUSE_NANOS;
			}
			try {
				sleepUntil(next);
			}
			catch (InterruptedException ex) {
				// only a stop ends the scheduler: an interrupt from elsewhere must not end the renewals
			}
		}
	}

	/** One pass over the leases (see the class comment); returns when the next pass is due. */
	private long pass(long now) {
		long next = now + this.renewer.maxSleepNanos();
		this.renewer.passStarting(this.leases, now);
		List<E> due = new ArrayList<>();
		for (E lease : this.leases) {
			if (lease.state() != LeaseRecord.State.HELD) {
				this.leases.remove(lease);
				continue;
			}
			if (lease.isMaxHoldReached(now)) {
				// the cap, checked first: at the cap the lease is given up for it, whatever its renewals did; the store
				// keeps it until it lapses or the holder's release deletes it
				this.leases.remove(lease);
				LockLostEvent event = lease.markLost(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
				if (event != null) {
					this.renewer.lost(lease, event);
				}
				continue;
			}
			if (this.renewer.isLostByClock(lease, now)) {
				this.leases.remove(lease);
				this.renewer.lostByClock(lease);
				continue;
			}
			boolean claimed = this.renewer.claim(lease, now);
			if (claimed) {
				due.add(lease);
			}
			next = this.renewer.nextCheckNanos(lease, claimed, next);
		}
		if (!due.isEmpty()) {
			next = this.renewer.renew(due, next);
		}
		return next;
	}

	private void sleepUntil(long wakeAt) throws InterruptedException {
		this.lock.lock();
		try {
			this.plannedWakeNanos = wakeAt;
			this.scanning = false;
			while (!this.dirty && this.running) {
				long remaining = wakeAt - System.nanoTime();
				if (remaining <= 0) {
					break;
				}
				this.changed.awaitNanos(remaining);
			}
			this.dirty = false;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Stop the passes; nothing is renewed once the pass running (and its renewals on this thread) ended. */
	public void stop() {
		this.running = false;
		wakeUp();
	}

	/** Wait up to {@code millis} for the scheduler thread to end (after {@link #stop}). */
	public void join(long millis) throws InterruptedException {
		this.thread.join(millis);
	}

	@Override
	public void close() {
		stop();
		try {
			join(TimeUnit.SECONDS.toMillis(5));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
