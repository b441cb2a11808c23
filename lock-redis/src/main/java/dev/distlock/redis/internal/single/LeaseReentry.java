package dev.distlock.redis.internal.single;

import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.lease.PendingReentries;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.Backoff;
import org.jspecify.annotations.Nullable;

/**
 * One more hold of the lease an owner already holds on a key, for the blocking acquisition (retried through
 * unanswered calls until the wait's deadline) and the asynchronous one (one call), which count a reply alike.
 */
final class LeaseReentry {

	private final LeaseAcquirer acquirer;

	private final LeaseStore store;

	private final LeaseWatchdog watchdog;

	private final LeaseRegistry registry;

	private final HoldReconciler reconciler;

	LeaseReentry(LeaseAcquirer acquirer, LeaseStore store, LeaseWatchdog watchdog, LeaseRegistry registry,
			HoldReconciler reconciler) {
		this.acquirer = acquirer;
		this.store = store;
		this.watchdog = watchdog;
		this.registry = registry;
		this.reconciler = reconciler;
	}

	/**
	 * Count one more hold of the lease the owner holds on the key. Returns null when Redis no longer has that lease
	 * (it is then reported lost) or this process ended it meanwhile; the caller then acquires the lock anew.
	 */
	@Nullable Lease reenter(LockRequest request, LeaseEntry entry, long start, long deadline)
			throws InterruptedException {
		// one target for every try: however often they run, they count once
		PendingReentries.Reentry reentry = entry.reentryTarget();
		try {
			return reenter(request, entry, start, deadline, reentry);
		}
		finally {
			entry.reentryAnswered(reentry); // nothing if counted
		}
	}

	private @Nullable Lease reenter(LockRequest request, LeaseEntry entry, long start, long deadline,
			PendingReentries.Reentry reentry) throws InterruptedException {
		long ttlMillis = request.ttl().toMillis();
		Backoff backoff = new Backoff();
		for (;;) {
			long sent = System.nanoTime();
			long[] reply;
			try {
				reply = reacquire(entry, ttlMillis, reentry.target);
			}
			catch (RuntimeException ex) {
				// A re-entry that runs unanswered counts a hold in Redis that this process does not count: the release
				// of the last hold this process knows ends the lease all the same (see release).
				LockUnavailableException failure = AcquireCall.failure(request, entry.redisKey, ex);
				if (request.waitTime().isZero() || failure instanceof LockAccessDeniedException) {
					throw failure;
				}
				if (System.nanoTime() - deadline >= 0) {
					throw AcquireCall.unansweredWithin(request, failure);
				}
				TimeUnit.NANOSECONDS.sleep(Math.min(backoff.nextNanos(), Math.max(0, deadline - System.nanoTime())));
				continue;
			}
			return counted(request, entry, reply, sent, start, reentry);
		}
	}

	/**
	 * The owner's lease re-entered (one call): the new hold, or null when the lease is gone or ended (a new acquisition
	 * follows, as for a thread). A re-entry that goes unanswered fails the acquisition (it is not retried).
	 */
	@Nullable Lease reenterOnce(LockRequest request, LeaseEntry entry, long start) {
		long sent = System.nanoTime();
		PendingReentries.Reentry reentry = entry.reentryTarget();
		try {
			long[] reply;
			try {
				reply = reacquire(entry, request.ttl().toMillis(), reentry.target);
			}
			catch (RuntimeException ex) {
				throw AcquireCall.failure(request, entry.redisKey, ex);
			}
			return counted(request, entry, reply, sent, start, reentry);
		}
		finally {
			entry.reentryAnswered(reentry); // nothing if counted
		}
	}

	/** The hold Redis counted with {@code reply} to a re-entry sent at {@code sent}, or null as for a re-entry. */
	private @Nullable Lease counted(LockRequest request, LeaseEntry entry, long[] reply, long sent, long start,
			PendingReentries.Reentry reentry) {
		if (reply[0] < 0) {
			this.registry.lostOnHolderCheck(entry);
			this.watchdog.unregister(entry);
			return null;
		}
		if (!entry.reenter(request.ttl().toMillis(), request.autoRenew(), sent, reentry)) {
			// Ended here meanwhile (released from another thread, or found lost): the hold just counted is one that
			// nothing in this process knows. Its owner id is not used again, so it can go.
			this.reconciler.discard(entry, false);
			return null;
		}
		if (request.autoRenew()) {
			this.watchdog.wakeUp();
		}
		return this.acquirer.newLease(request, entry, sent, start);
	}

	/** One more hold of the lease in Redis, by the script of its kind. */
	private long[] reacquire(LeaseEntry entry, long ttlMillis, long target) {
		return entry.kind.reenter(this.store, entry, ttlMillis, target);
	}

}
