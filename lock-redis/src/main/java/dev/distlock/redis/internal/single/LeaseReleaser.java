package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Function;

import dev.distlock.core.LockException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.support.NonBlockingThreads;
import dev.distlock.redis.internal.wait.NotificationRefusals;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import org.jspecify.annotations.Nullable;

/**
 * What a holder does with its lease: release a hold, hand the lease straight to a waiter of this process (a thread or
 * an asynchronous acquisition), or extend it. One role: the end of a hold, in Redis and in this process's picture, kept in step (see the fault model in
 * docs/architecture.md for each reply that is lost).
 * <p>
 * Which script a release, extension or ownership check runs, and who may take the lease after a release (a waiting
 * thread of this process, the head of a fair queue, every waiter of a read-write lock), is the lease's
 * {@link LockKind}'s: the kind sends its call and hands its reply to {@link #settle} (or {@link #sendAsync}), which keep
 * this process's picture the same way for every kind; the failure paths ({@link #unreachable}, {@link #foundGone}) are
 * shared too.
 */
public final class LeaseReleaser {

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

	public LeaseReleaser(LeaseStore store, ReleaseSubscriber subscriber, LeaseWatchdog watchdog, LeaseRegistry registry,
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

	public LeaseStore store() {
		return this.store;
	}

	public ReleaseSubscriber subscriber() {
		return this.subscriber;
	}

	public HoldReconciler reconciler() {
		return this.reconciler;
	}

	public String clientId() {
		return this.clientId;
	}

	/** How many times in a row a lease may be handed to a waiter of this process. */
	public int localHandOvers() {
		return this.localHandOvers;
	}

	/** Release one hold of {@code lease}, the way of its kind ({@link LockKind#release}). */
	void release(RedisLease lease) {
		Duration held = Duration.ofNanos(System.nanoTime() - lease.acquiredAtNanos);
		lease.entry.kind.release(this, lease, held);
	}

	/**
	 * What Redis answered to the release of a hold, applied to this process's picture (throws as release does): a
	 * hold Redis no longer has ({@code left} below 0) is a loss; a refused publish is reported; and when it was the
	 * last hold this process knows, the lease ends here and {@code lastHold}, the kind's part, wakes or hands on to
	 * whoever may take it next (or discards the holds Redis counted and this process did not).
	 */
	public void settle(RedisLease lease, Duration held, long left, @Nullable String publishRefused, Runnable lastHold) {
		LeaseEntry entry = lease.entry;
		if (left < 0) {
			throw foundGone(lease, entry, held);
		}
		if (publishRefused != null) {
			this.notifications.publishRefused(entry.key, entry.redisKey, entry.channel, publishRefused);
		}
		if (entry.releaseHold(left == 0)) {
			ended(entry);
			lastHold.run();
		}
		released(lease, entry, held);
	}

	/**
	 * {@link #release} without blocking the caller, with the same outcome: the future fails as {@code release} would
	 * throw, the hold counts as released either way, and a release that goes unanswered leaves the lease to the
	 * {@link HoldReconciler} as {@code release} does. On the Lettuce-native path the script is sent on Lettuce's
	 * asynchronous commands and its reply applied on the engine's bounded pool; a release that may hand the lease to a
	 * waiter of this process (a thread or an asynchronous acquisition), or one on another path, runs {@code release}
	 * on that pool. Only once the service is closed (its pool shut down) does it run on the caller's thread. A caller
	 * on a thread that must not block (a Reactor or Netty event loop thread, see {@link NonBlockingThreads}) has the
	 * script sent from the pool too, where a {@code release} then runs at once rather than one more hop away (issue 31:
	 * a reactive caller's release that hands the lease over).
	 */
	CompletableFuture<Void> releaseAsync(RedisLease lease) {
		if (NonBlockingThreads.isCurrent()) {
			try {
				return CompletableFuture.supplyAsync(() -> sendRelease(lease, true), this.asyncReleases)
					.thenCompose(f -> f);
			}
			catch (RejectedExecutionException ex) {
				// closed: as below, on the caller's thread
			}
		}
		return sendRelease(lease, false);
	}

	/** Send the release; {@code onPool}: on the bounded pool already, where a blocking {@code release} may run. */
	private CompletableFuture<Void> sendRelease(RedisLease lease, boolean onPool) {
		CompletableFuture<Void> done = new CompletableFuture<>();
		if (!lease.entry.kind.releaseAsync(this, lease, done)) {
			if (onPool) {
				completing(done, () -> release(lease)).run();
			}
			else {
				onPool(done, () -> release(lease));
			}
		}
		return done;
	}

	/**
	 * Send a release without blocking ({@code send}, given the entry once its release started), its reply applied by
	 * {@code settle} on the bounded pool, completing {@code done}; a failure to send, or no reply, ends the hold as
	 * {@link #release} does. Returns false when {@code send} has no such path (null): the caller then releases on the
	 * pool.
	 */
	public <R> boolean sendAsync(RedisLease lease, CompletableFuture<Void> done,
			Function<LeaseEntry, @Nullable CompletableFuture<R>> send, BiConsumer<Duration, R> settle) {
		LeaseEntry entry = lease.entry;
		Duration held = Duration.ofNanos(System.nanoTime() - lease.acquiredAtNanos);
		entry.releaseStarting();
		CompletableFuture<R> sent;
		try {
			sent = send.apply(entry);
		}
		catch (RuntimeException ex) { // no connection to send it on
			sent = CompletableFuture.failedFuture(ex);
		}
		if (sent == null) {
			return false;
		}
		sent.whenComplete((reply, failure) -> onPool(done, () -> {
			if (failure != null) {
				Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure;
				throw unreachable(lease, entry, held,
						(cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause));
			}
			settle.accept(held, reply);
		}));
		return true;
	}

	/** Run {@code work} on the bounded pool (the caller's thread once it is shut down), completing {@code done}. */
	private void onPool(CompletableFuture<Void> done, Runnable work) {
		Runnable task = completing(done, work);
		try {
			this.asyncReleases.execute(task);
		}
		catch (RejectedExecutionException ex) {
			task.run();
		}
	}

	/** {@code work}, completing {@code done} with its outcome. */
	private static Runnable completing(CompletableFuture<Void> done, Runnable work) {
		return () -> {
			try {
				work.run();
				done.complete(null);
			}
			catch (RuntimeException | Error ex) {
				done.completeExceptionally(ex);
			}
		};
	}

	public void released(RedisLease lease, LeaseEntry entry, Duration held) {
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
	public LockLostException foundGone(RedisLease lease, LeaseEntry entry, Duration held) {
		LockLostEvent event = this.registry.lostOnHolderCheck(entry);
		this.watchdog.unregister(entry);
		if (entry.releaseHold(false)) {
			ended(entry);
			this.reconciler.discard(entry, entry.kind.queued());
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
	public LockException unreachable(RedisLease lease, LeaseEntry entry, Duration held, RuntimeException ex) {
		if (entry.releaseHold(false)) {
			ended(entry);
			this.reconciler.discard(entry, entry.kind.queued());
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
			remaining = entry.kind.extend(this.store, entry, millis, add);
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
			remaining = entry.kind.owned(this.store, entry);
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

	public void ended(LeaseEntry entry) {
		this.registry.forget(entry);
		this.watchdog.unregister(entry);
	}

}
