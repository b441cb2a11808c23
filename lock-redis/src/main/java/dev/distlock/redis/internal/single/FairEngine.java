package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.kind.FairKind;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.store.FairStore;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import org.jspecify.annotations.Nullable;

/**
 * What fair acquisitions ({@link FairAcquisition}) work with, and the lease they deliver.
 *
 * @param acquirer the acquirer (attempts, handles, listeners)
 * @param store the fair scripts
 * @param leaseStore the lease scripts (the one-shot extension of a handed fixed lease)
 * @param subscriber the release messages
 * @param watchdog the renewals
 * @param registry the leases of this process
 * @param reconciler the fair discard of owners whose calls went unanswered
 * @param listeners the listeners
 * @param calls the engine's call pool
 * @param timers the engine's timers
 * @param entryTtlMillis how long a queue entry lives without keepalive
 */
public record FairEngine(LeaseAcquirer acquirer, FairStore store, LeaseStore leaseStore, ReleaseSubscriber subscriber,
		LeaseWatchdog watchdog, LeaseRegistry registry, HoldReconciler reconciler, List<LockListener> listeners,
		Executor calls, ScheduledExecutorService timers, long entryTtlMillis) {

	/**
	 * A new fair lease of this process: an entry (watched by the watchdog) and its handle. A lease the acquisition was
	 * handed ({@code grantedUntil} not 0) lasts only the short grant in Redis (see {@link FairScripts}): the
	 * watchdog's first renewal raises it to the lease time within the first half of the grant; a fixed lease gets
	 * that once, by an extension on the call pool (not on the caller's path).
	 */
	Lease newLease(LockRequest request, Attempt attempt, long token, long sent, long grantedUntil, long start) {
		LeaseEntry entry = new LeaseEntry(request.key(), attempt.redisKey, attempt.channel, attempt.owner,
				request.effectiveName(), token, attempt.ttlMillis, request.autoRenew(), sent, 0, attempt.lockOwner,
				attempt.holder, attempt.kind);
		entry.capHold(request.maxHold());
		if (grantedUntil != 0) {
			long now = System.nanoTime();
			long renewAt = now + Math.max(0, Math.min(this.watchdog.intervalNanos(attempt.ttlMillis),
					(grantedUntil - now) / 2));
			entry.grantedUntil(grantedUntil, renewAt);
		}
		this.registry.add(entry);
		this.watchdog.register(entry);
		if (grantedUntil != 0 && !request.autoRenew()) {
			run(() -> extendFixed(entry));
		}
		return this.acquirer.newLease(request, entry, sent, start);
	}

	/** {@code FAIR_ACQUIRE} for {@code attempt}: takes the lease, or queues its owner when it will wait. */
	long[] acquire(Attempt attempt, boolean queue) {
		return this.store.acquire(attempt.redisKey, attempt.owner, attempt.ttlMillis, this.entryTtlMillis, queue,
				attempt.label);
	}

	/** {@code FAIR_LEAVE} for {@code attempt}; unanswered, the attempt is marked (it may run yet, or not at all). */
	void leave(Attempt attempt) {
		try {
			this.store.leave(attempt.redisKey, attempt.owner, attempt.channel);
		}
		catch (RuntimeException ex) {
			attempt.unanswered = true;
		}
	}

	/**
	 * An acquisition of {@code attempt} ended without the lease: when a call or leave of it went unanswered, a late one
	 * may yet queue its owner (or take the lease), so the {@link HoldReconciler}'s fair discard leaves again.
	 */
	void discardIfUnanswered(LockRequest request, Attempt attempt) {
		if (attempt.unanswered) {
			attempt.discardWith(this.reconciler, request.key(), true);
		}
	}

	/**
	 * When a queued waiter attempts next: every third of the entry ttl (the keepalive, which also notices a lost
	 * message and an expired holder), sooner at the holder's pttl ({@code holderTtlMillis}, -1 if none), and at poll
	 * intervals while no message can come ({@code subscribed} false).
	 */
	long nextAttemptNanos(long holderTtlMillis, boolean subscribed) {
		long delay = TimeUnit.MILLISECONDS.toNanos(this.entryTtlMillis) / 3;
		if (holderTtlMillis >= 0) {
			delay = Math.min(delay, LeaseAcquirer.holderTtlNanos(holderTtlMillis));
		}
		if (!subscribed) {
			delay = Math.min(delay, LeaseAcquirer.pollNanos()); // no message can come: poll
		}
		return delay;
	}

	/**
	 * Until when a lease handed to {@code attempt}'s owner is granted in Redis: at least one entry ttl, capped by the
	 * lease time, from {@code queuedAtNanos}, the send of the latest call that found it queued.
	 */
	long grantedUntil(long queuedAtNanos, Attempt attempt) {
		return queuedAtNanos + TimeUnit.MILLISECONDS.toNanos(Math.min(this.entryTtlMillis, attempt.ttlMillis));
	}

	/** A new asynchronous fair acquisition; a failure is reported to the listeners as the blocking path does. */
	public CompletableFuture<Optional<Lease>> acquireAsync(LockRequest request, String redisKey, LockOwner owner) {
		long start = System.nanoTime();
		CompletableFuture<Optional<Lease>> result = new FairAcquisition(this, request, redisKey, owner, start, false)
			.start(false);
		result.whenComplete((lease, failure) -> {
			if (failure instanceof LockUnavailableException unavailable) {
				this.listeners.forEach(listener -> listener.notAcquired(request,
						Duration.ofNanos(System.nanoTime() - start), unavailable));
			}
		});
		return result;
	}

	/**
	 * An asynchronous re-entry of a fair lock found the owner's lease gone: a new fair acquisition completes
	 * {@code result}, unless {@code claimEnd} says it ended meanwhile (cancelled), and then a lease it got is released
	 * again (see {@link FairKind#reacquireAsync}).
	 */
	public void reacquire(LockRequest request, String redisKey, LockOwner owner, CompletableFuture<Optional<Lease>> result,
			BooleanSupplier claimEnd) {
		acquireAsync(request, redisKey, owner).whenComplete((lease, failure) -> {
			if (failure != null) {
				if (claimEnd.getAsBoolean()) {
					result.completeExceptionally(failure);
				}
			}
			else if (!claimEnd.getAsBoolean() || !result.complete(lease)) {
				lease.ifPresent(Lease::close);
			}
		});
	}

	/** The one-shot extension of a handed fixed lease to its lease time; a lease already released is left alone. */
	private void extendFixed(LeaseEntry entry) {
		if (entry.state() != LeaseEntry.State.HELD) {
			return;
		}
		long sent = System.nanoTime();
		try {
			long remaining = this.leaseStore.extend(entry.redisKey, entry.owner, entry.token, entry.ttlMillis(), false);
			if (remaining >= 0) {
				entry.confirmed(sent, remaining);
			}
		}
		catch (RuntimeException ex) {
			// the lease keeps its grant; the watchdog ends it as expired when that runs out
		}
	}

	/** Schedule on the engine's timers; null once the service is closed. */
	@Nullable ScheduledFuture<?> schedule(Runnable action, long delayNanos) {
		try {
			return this.timers.schedule(action, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			return null;
		}
	}

	static void cancel(@Nullable ScheduledFuture<?> timer) {
		if (timer != null) {
			timer.cancel(false);
		}
	}

	/** Run on the call pool; once the service is closed, on the calling thread. */
	void run(Runnable work) {
		try {
			this.calls.execute(work);
		}
		catch (RejectedExecutionException ex) {
			work.run();
		}
	}

}
