package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.script.FairScripts;

import org.jspecify.annotations.Nullable;

/**
 * What a holder does with its lease: release a hold, hand the lease straight to a waiting thread of this process, or
 * extend it. One role: the end of a hold, in Redis and in this process's picture, kept in step (see the fault model in
 * docs/architecture.md for each reply that is lost).
 */
final class LeaseReleaser {

	/**
	 * How long this process's threads hold back after it released a lock that other processes were waiting for: long
	 * enough for the release message to reach them and their attempt to reach Redis on a loaded machine.
	 */
	private static final long YIELD_NANOS = TimeUnit.MILLISECONDS.toNanos(3);

	private final LeaseStore store;

	private final ReleaseSubscriber subscriber;

	private final LeaseWatchdog watchdog;

	private final LeaseRegistry registry;

	private final HoldReconciler reconciler;

	private final List<LockListener> listeners;

	private final String clientId;

	private final int localHandOvers;

	private final NotificationRefusals notifications;

	/** Where asynchronous releases run: a small, bounded pool of engine threads. */
	private final Executor asyncReleases;

	LeaseReleaser(LeaseStore store, ReleaseSubscriber subscriber, LeaseWatchdog watchdog, LeaseRegistry registry,
			HoldReconciler reconciler, List<LockListener> listeners, String clientId, int localHandOvers,
			NotificationRefusals notifications, Executor asyncReleases) {
		this.asyncReleases = asyncReleases;
		this.notifications = notifications;
		this.store = store;
		this.subscriber = subscriber;
		this.watchdog = watchdog;
		this.registry = registry;
		this.reconciler = reconciler;
		this.listeners = listeners;
		this.clientId = clientId;
		this.localHandOvers = localHandOvers;
	}

	void release(RedisLease lease) {
		LeaseEntry entry = lease.entry;
		Duration held = Duration.ofNanos(System.nanoTime() - lease.acquiredAtNanos);
		if (entry.isFair()) {
			releaseFair(lease, entry, held);
			return;
		}
		if (entry.mode.isReadWrite()) {
			releaseReadWrite(lease, entry, held);
			return;
		}
		if (entry.handOvers < this.localHandOvers && entry.holds() == 1 && entry.state() == LeaseEntry.State.HELD) {
			Waiter next = this.subscriber.reserveForHandOver(entry.channel, entry.owner);
			if (next != null && handOver(lease, entry, next, held)) {
				return;
			}
		}
		LeaseStore.Released reply;
		entry.releaseStarting();
		try {
			reply = this.store.release(entry.redisKey, entry.owner, entry.token, entry.channel, this.clientId,
					entry.holdsBeforeRelease(), entry.ttlMillis());
		}
		catch (RuntimeException ex) {
			throw unreachable(lease, entry, held, ex);
		}
		applyRelease(lease, entry, held, reply, null);
	}

	/**
	 * The release of a fair lease: no local hand-over (it would jump the queue); at its last hold the script hands the
	 * lease to the head of the queue in Redis, and when that waiter is in this process it is told at once, without
	 * waiting for the message.
	 */
	private void releaseFair(RedisLease lease, LeaseEntry entry, Duration held) {
		FairStore.FairReleased reply;
		entry.releaseStarting();
		try {
			reply = this.store.fair().release(entry.redisKey, entry.owner, entry.token, entry.channel,
					entry.holdsBeforeRelease(), entry.ttlMillis());
		}
		catch (RuntimeException ex) {
			throw unreachable(lease, entry, held, ex);
		}
		if (reply.holdsLeft() < 0) {
			throw foundGone(lease, entry, held);
		}
		if (reply.publishRefused() != null) {
			this.notifications.publishRefused(entry.key, entry.redisKey, entry.channel, reply.publishRefused());
		}
		if (entry.releaseHold(reply.holdsLeft() == 0)) {
			ended(entry);
			String next = reply.nextOwner();
			if (reply.holdsLeft() > 0) {
				// Redis counted holds this process does not: the lease ends with the last hold this process knows
				this.reconciler.discard(entry, true);
			}
			else if (next != null) {
				this.subscriber.fairHandedOver(FairScripts.handOverChannel(entry.channel, next), next, reply.nextToken());
			}
			else {
				this.subscriber.releasedLocally(entry.channel, entry.token);
			}
		}
		released(lease, entry, held);
	}

	/**
	 * The release of a read-write hold: no hand-over (several readers may enter at once), and local waiters woken only
	 * when the release freed the lock for others, all of them (as its message wakes every waiter of other processes).
	 */
	private void releaseReadWrite(RedisLease lease, LeaseEntry entry, Duration held) {
		ReadWriteStore.Released reply;
		entry.releaseStarting();
		try {
			reply = this.store.readWrite().release(entry);
		}
		catch (RuntimeException ex) {
			throw unreachable(lease, entry, held, ex);
		}
		applyRelease(lease, entry, held, reply.asLeaseRelease(), (reply.message() != null) ? reply.message() : "");
	}

	/**
	 * What Redis answered to the release of a hold, applied to this process's picture (throws as release does).
	 * @param readWriteMessage for a read-write hold, the release message it published ('' for none), else null
	 */
	private void applyRelease(RedisLease lease, LeaseEntry entry, Duration held, LeaseStore.Released reply,
			@Nullable String readWriteMessage) {
		long left = reply.holdsLeft();
		if (left < 0) {
			throw foundGone(lease, entry, held);
		}
		if (reply.publishRefused() != null) {
			this.notifications.publishRefused(entry.key, entry.redisKey, entry.channel, reply.publishRefused());
		}
		if (entry.releaseHold(left == 0)) {
			ended(entry);
			if (readWriteMessage != null) {
				if (!readWriteMessage.isEmpty()) {
					this.subscriber.releasedLocallyToAll(entry.channel, readWriteMessage);
				}
				else if (left > 0) {
					// Redis counted holds this process does not: they go (the discard publishes when that frees the
					// lock, and the message wakes this process's waiters too)
					this.reconciler.discardNow(entry);
				}
			}
			else if (left == 0) {
				if (reply.othersWaiting()) {
					this.subscriber.yieldUntil(entry.channel, System.nanoTime() + YIELD_NANOS);
				}
				this.subscriber.releasedLocally(entry.channel, entry.token);
			}
			else if (this.reconciler.discardNow(entry)) {
				// Redis counted holds this process does not (re-entries whose replies were lost): the lease ends with
				// the last hold this process knows
				this.subscriber.releasedLocally(entry.channel, entry.token);
			}
		}
		released(lease, entry, held);
	}

	/**
	 * {@link #release} without blocking the caller, with the same outcome: the future fails as {@code release} would
	 * throw, the hold counts as released either way, and a release that goes unanswered leaves the lease to the
	 * {@link HoldReconciler} as {@code release} does. On the Lettuce-native path the script is sent on Lettuce's
	 * asynchronous commands and its reply applied on the engine's bounded pool; a release that may hand the lease to a
	 * waiting thread of this process, or one on another path, runs {@code release} on that pool. Only once the service
	 * is closed (its pool shut down) does it run on the caller's thread. A caller on a thread that must not block (a
	 * Reactor or Netty event loop thread, see {@link NonBlockingThreads}) has the script sent from the pool too.
	 */
	CompletableFuture<Void> releaseAsync(RedisLease lease) {
		if (NonBlockingThreads.isCurrent()) {
			try {
				return CompletableFuture.supplyAsync(() -> sendRelease(lease), this.asyncReleases).thenCompose(f -> f);
			}
			catch (RejectedExecutionException ex) {
				// closed: as below, on the caller's thread
			}
		}
		return sendRelease(lease);
	}

	private CompletableFuture<Void> sendRelease(RedisLease lease) {
		CompletableFuture<Void> done = new CompletableFuture<>();
		LeaseEntry entry = lease.entry;
		boolean readWrite = entry.mode.isReadWrite(); // never handed over
		// a fair release runs on the pool (blocking): its reply may hand the lease to a waiter of this process
		if (!entry.isFair() && (readWrite
				|| !(entry.handOvers < this.localHandOvers && this.subscriber.hasWaitingThread(entry.channel)))) {
			Duration held = Duration.ofNanos(System.nanoTime() - lease.acquiredAtNanos);
			entry.releaseStarting();
			CompletableFuture<?> sent;
			try {
				sent = readWrite ? this.store.readWrite().releaseAsync(entry)
						: this.store.releaseAsync(entry.redisKey, entry.owner, entry.token, entry.channel, this.clientId,
								entry.holdsBeforeRelease(), entry.ttlMillis());
			}
			catch (RuntimeException ex) { // no connection to send it on
				sent = CompletableFuture.failedFuture(ex);
			}
			if (sent != null) {
				sent.whenComplete((reply, failure) -> onPool(done, () -> {
					if (failure != null) {
						Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
								? failure.getCause() : failure;
						throw unreachable(lease, entry, held,
								(cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause));
					}
					if (reply instanceof ReadWriteStore.Released released) {
						applyRelease(lease, entry, held, released.asLeaseRelease(),
								(released.message() != null) ? released.message() : "");
					}
					else {
						applyRelease(lease, entry, held, (LeaseStore.Released) reply, null);
					}
				}));
				return done;
			}
		}
		onPool(done, () -> release(lease));
		return done;
	}

	/** Run {@code work} on the bounded pool (the caller's thread once it is shut down), completing {@code done}. */
	private void onPool(CompletableFuture<Void> done, Runnable work) {
		Runnable task = () -> {
			try {
				work.run();
				done.complete(null);
			}
			catch (RuntimeException | Error ex) {
				done.completeExceptionally(ex);
			}
		};
		try {
			this.asyncReleases.execute(task);
		}
		catch (RejectedExecutionException ex) {
			task.run();
		}
	}

	/**
	 * Hand the lease straight to {@code next}, a thread of this process waiting for it: one round trip, no release
	 * message, no race with other processes' waiters. At most {@code localHandOvers} times in a row, so that other
	 * processes get their turn. Returns false when the lease has to be released the normal way.
	 */
	private boolean handOver(RedisLease lease, LeaseEntry entry, Waiter next, Duration held) {
		boolean granted = false;
		try {
			long sent = System.nanoTime();
			long token;
			entry.releaseStarting();
			try {
				token = this.store.handOver(entry.redisKey, entry.owner, entry.token, next.owner, next.ttlMillis,
						next.label);
			}
			catch (RuntimeException ex) {
				next.markHandOverUnanswered(); // the hand-over may yet run: the waiter's owner may get the lease
				throw unreachable(lease, entry, held, ex);
			}
			if (token == -2) {
				return false;
			}
			if (token < 0) {
				throw foundGone(lease, entry, held);
			}
			entry.releaseHold(true);
			ended(entry);
			next.grant(token, sent, entry.handOvers + 1);
			granted = true;
		}
		finally {
			if (!granted) {
				next.revert();
			}
		}
		released(lease, entry, held);
		return true;
	}

	private void released(RedisLease lease, LeaseEntry entry, Duration held) {
		this.listeners.forEach(listener -> listener.released(lease, held, true));
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			throw new LockLostException(lost);
		}
	}

	/**
	 * The release found the lease gone from Redis: a loss (announced once), and the hold ends here. Redis may yet hold
	 * something of this owner under another token (a script of its acquisition that ran late and adopted the hold):
	 * the owner id is done with, so whatever it holds can go.
	 */
	private LockLostException foundGone(RedisLease lease, LeaseEntry entry, Duration held) {
		LockLostEvent event = this.registry.lostOnHolderCheck(entry);
		this.watchdog.unregister(entry);
		if (entry.releaseHold(false)) {
			ended(entry);
			this.reconciler.discard(entry, entry.isFair());
		}
		this.listeners.forEach(listener -> listener.released(lease, held, false));
		return new LockLostException(event);
	}

	/**
	 * Redis did not answer a release: the hold ends here either way. When it was the last, whatever Redis still has of
	 * the lease is discarded once Redis answers again, and expires at its lease time otherwise. A lease already found
	 * lost (before the release, or by the watchdog while it went unanswered) fails with its {@link LockLostException},
	 * as every release of a lost lease does: its holder must hear of the loss whether Redis answers or not.
	 */
	private LockException unreachable(RedisLease lease, LeaseEntry entry, Duration held, RuntimeException ex) {
		if (entry.releaseHold(false)) {
			ended(entry);
			this.reconciler.discard(entry, entry.isFair());
		}
		this.listeners.forEach(listener -> listener.released(lease, held, false));
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			LockLostException failure = new LockLostException(lost);
			failure.addSuppressed(ex);
			return failure;
		}
		return RedisFailures.of(entry.key, entry.redisKey, "release", ex,
				"; the lease expires within " + entry.ttlMillis() + "ms");
	}

	/**
	 * Add {@code millis} to the lease's remaining time ({@code add}), or set it to {@code millis}; a {@code replace}
	 * also makes {@code millis} the lease time the watchdog renews to.
	 */
	void extend(RedisLease lease, long millis, boolean add, boolean replace) {
		LeaseEntry entry = lease.entry;
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			throw new LockLostException(lost);
		}
		long sent = System.nanoTime();
		long remaining;
		try {
			remaining = entry.mode.isReadWrite() ? this.store.readWrite().extend(entry, millis, add)
					: this.store.extend(entry.redisKey, entry.owner, entry.token, millis, add);
		}
		catch (RuntimeException ex) {
			if (replace) {
				// it may run yet: assume the shorter lease (see LeaseEntry.replaced)
				entry.replaced(sent, millis, this.watchdog.intervalNanos(millis), false);
				this.watchdog.wakeUp();
			}
			throw RedisFailures.of(entry.key, entry.redisKey, add ? "extend" : "renew", ex, "");
		}
		if (remaining < 0) {
			throw new LockLostException(foundGone(entry));
		}
		if (replace) {
			// the watchdog's next renewal may now be due earlier than it planned
			entry.replaced(sent, millis, this.watchdog.intervalNanos(millis), true);
			this.watchdog.wakeUp();
		}
		else {
			entry.confirmed(sent, remaining);
		}
	}

	/**
	 * Ask Redis whether the lease is still ours with its token. A lease found gone is lost exactly as a renewal would
	 * find it: announced once, no longer renewed, and its release throws {@link LockLostException}.
	 */
	boolean isOwned(RedisLease lease) {
		LeaseEntry entry = lease.entry;
		if (entry.lostEvent() != null || entry.state() != LeaseEntry.State.HELD) {
			return false;
		}
		long sent = System.nanoTime();
		long remaining;
		try {
			remaining = entry.mode.isReadWrite() ? this.store.readWrite().owned(entry)
					: this.store.owned(entry.redisKey, entry.owner, entry.token);
		}
		catch (RuntimeException ex) {
			throw RedisFailures.of(entry.key, entry.redisKey, "check the ownership of", ex, "");
		}
		if (remaining < 0) {
			if (entry.isReleasing()) {
				// our own last release is on its way: its reply decides, and the hold is not ours any more either way
				return false;
			}
			foundGone(entry);
			return false;
		}
		entry.observed(sent, remaining);
		return true;
	}

	private LockLostEvent foundGone(LeaseEntry entry) {
		LockLostEvent event = this.registry.lostOnHolderCheck(entry);
		this.watchdog.unregister(entry);
		return event;
	}

	private void ended(LeaseEntry entry) {
		this.registry.forget(entry);
		this.watchdog.unregister(entry);
	}

}
