package dev.distlock.redis.internal.wait;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.single.AsyncAcquisition;
import dev.distlock.redis.internal.single.FairAcquisition;
import org.jspecify.annotations.Nullable;

/**
 * One thread waiting for one lock, or one asynchronous acquisition ({@link AsyncAcquisition}: no thread, a wake-up
 * action instead). Besides being woken, a waiter can be handed the lease by a holder in this process: a waiting thread
 * always, an asynchronous acquisition when its kind of lock hands over locally (issue 31); a fair waiter never (its
 * lease comes from the queue). Its state says who may act:
 * <ul>
 * <li>WAITING: between attempts; a holder may reserve it (to RESERVED), the waiter may start an attempt (to
 * ATTEMPTING) or leave (to LEFT).</li>
 * <li>ATTEMPTING: its own attempt is on its way to Redis; no holder may hand it the lease meanwhile, which could
 * otherwise make that attempt a re-entry of the handed lease.</li>
 * <li>RESERVED: a holder is handing the lease over; the waiter may neither attempt nor leave until the holder
 * either grants it (to GRANTED, the waiter then owns the lease in Redis and must take it) or reverts (to
 * WAITING). This is what makes sure a handed lease always has a holder that knows it: a thread, which waits out the
 * reservation ({@link #handedOver}, {@link #leave}); or an asynchronous acquisition, which never waits ({@link #tryLeave}
 * refuses while RESERVED) and is woken by the grant or the revert instead: its future then takes the lease, or, if it
 * ended meanwhile (cancelled, failed), it hands the owner id to the reconciler, which deletes the handed lease.</li>
 * </ul>
 * A grant or a revert always signals the waiter (after the state changed), and a holder whose hand-over got no answer
 * marks the waiter ({@link #markHandOverUnanswered}) before it reverts: whoever the signal wakes sees both.
 */
public final class Waiter {

	private static final int WAITING = 0;

	private static final int ATTEMPTING = 1;

	private static final int RESERVED = 2;

	private static final int GRANTED = 3;

	private static final int LEFT = 4;

	/** How long a waiter waits for a holder to finish a hand-over before it stops waiting for it. */
	private static final long HAND_OVER_PATIENCE_NANOS = TimeUnit.MINUTES.toNanos(2);

	final ReleaseChannel channel;

	public final String owner;

	/** The lock's name, for the per-name gauges. */
	final String name;

	public final long ttlMillis;

	/** When it started to wait ({@link System#nanoTime()}): its process's note in Redis says how long it has waited. */
	final long sinceNanos = System.nanoTime();

	/** The label a lease handed to this waiter names it by ({@link LockScripts#LABEL_PREFIX}), or '' for none. */
	public final String label;

	/** The waiting thread, or null for an asynchronous waiter. */
	private final @Nullable Thread thread;

	/** What wakes an asynchronous waiter (quick: it only schedules an attempt), or null for a waiting thread. */
	private final @Nullable Runnable wakeUp;

	/** Whether a holder of this process may hand this waiter its lease ({@link #reserve}). */
	private final boolean takesHandOvers;

	private final CompletableFuture<Void> subscribed;

	/** A fair waiter's action when a fair release hands it the lease (the new token), or null for other waiters. */
	private final @Nullable LongConsumer fairHandOver;

	private final AtomicInteger state = new AtomicInteger(WAITING);

	/** Written by the granting holder before the state becomes GRANTED, read by the waiter after it sees it. */
	private long grantedToken;

	private long grantedAtNanos;

	private int grantedHandOvers;

	public volatile boolean signalled;

	/** Set by a holder whose hand-over to this waiter got no answer: Redis may give this waiter's owner the lease. */
	private volatile boolean handOverUnanswered;

	Waiter(ReleaseChannel channel, Thread thread, CompletableFuture<Void> subscribed, String owner, String name,
			long ttlMillis, String label) {
		this(channel, thread, null, null, subscribed, owner, name, ttlMillis, label, true);
	}

	/**
	 * An asynchronous waiter ({@link AsyncAcquisition}): no thread, woken by {@code wakeUp}; handed leases by holders
	 * of this process if {@code takesHandOvers}, with {@code label}.
	 */
	Waiter(ReleaseChannel channel, Runnable wakeUp, CompletableFuture<Void> subscribed, String owner, String name,
			long ttlMillis, String label, boolean takesHandOvers) {
		this(channel, null, wakeUp, null, subscribed, owner, name, ttlMillis, label, takesHandOvers);
	}

	/** A fair waiter ({@link FairAcquisition}): no thread, woken by {@code wakeUp}, handed leases by message. */
	Waiter(ReleaseChannel channel, Runnable wakeUp, LongConsumer fairHandOver, CompletableFuture<Void> subscribed,
			String owner, String name, long ttlMillis) {
		this(channel, null, wakeUp, fairHandOver, subscribed, owner, name, ttlMillis, "", false);
	}

	private Waiter(ReleaseChannel channel, @Nullable Thread thread, @Nullable Runnable wakeUp,
			@Nullable LongConsumer fairHandOver, CompletableFuture<Void> subscribed, String owner, String name,
			long ttlMillis, String label, boolean takesHandOvers) {
		this.takesHandOvers = takesHandOvers;
		this.fairHandOver = fairHandOver;
		this.label = label;
		this.channel = channel;
		this.thread = thread;
		this.wakeUp = wakeUp;
		this.subscribed = subscribed;
		this.owner = owner;
		this.name = name;
		this.ttlMillis = ttlMillis;
	}

	void signal() {
		this.signalled = true;
		Runnable action = this.wakeUp;
		if (action != null) {
			action.run();
		}
		else {
			LockSupport.unpark(this.thread);
		}
	}

	/** A fair release handed this fair waiter the lease with {@code token}; false if it is not a fair waiter. */
	boolean fairHandedOver(long token) {
		LongConsumer action = this.fairHandOver;
		if (action == null) {
			return false;
		}
		action.accept(token);
		return true;
	}

	/** {@return the confirmation of its channel's subscription} */
	public CompletableFuture<Void> subscribed() {
		return this.subscribed;
	}

	/**
	 * Wait until the subscription is confirmed, the waiter is woken (by a release in this process or a hand-over:
	 * the wake-up is left for {@link #await}), or the deadline; true if the subscription is confirmed.
	 */
	public boolean awaitSubscribed(long deadlineNanos) throws InterruptedException {
		this.subscribed.whenComplete((result, failure) -> LockSupport.unpark(this.thread));
		if (!parkUntil(() -> this.subscribed.isDone() || this.signalled, deadlineNanos, this)) {
			return false;
		}
		return this.subscribed.isDone() && !this.subscribed.isCompletedExceptionally();
	}

	/**
	 * Park until woken, handed the lease, or {@code untilNanos}; true if woken (by a release or a hand-over).
	 * Consumes the wake-up.
	 */
	public boolean await(long untilNanos) throws InterruptedException {
		if (!parkUntil(() -> this.signalled, untilNanos, this)) {
			return false;
		}
		this.signalled = false;
		return true;
	}

	/**
	 * Park the calling thread until {@code woken} holds, {@code untilNanos} ({@link System#nanoTime()}), or an
	 * interrupt: the one wait loop of both engines' waiting threads (a Redlock wait parks on the waiters of all its
	 * nodes at once). Returns true if woken in time; a spurious wake-up parks again for what is left.
	 */
	public static boolean parkUntil(BooleanSupplier woken, long untilNanos, Object blocker) throws InterruptedException {
		while (!woken.getAsBoolean()) {
			long remaining = untilNanos - System.nanoTime();
			if (remaining <= 0) {
				return false;
			}
			LockSupport.parkNanos(blocker, remaining);
			if (Thread.interrupted()) {
				throw new InterruptedException();
			}
		}
		return true;
	}

	/** Before an attempt: false when a hand-over to this waiter is under way or done (see {@link #handedOver}). */
	public boolean startAttempt() {
		return this.state.compareAndSet(WAITING, ATTEMPTING);
	}

	/** After an attempt that did not acquire. */
	public void endAttempt() {
		this.state.compareAndSet(ATTEMPTING, WAITING);
	}

	/**
	 * Wait out a hand-over to this waiter, if one is under way; true when this waiter was granted the lease (see
	 * {@link #grantedToken()}), false when there was none or it was reverted. Not interruptible: a granted lease
	 * must find its holder (an interrupt is kept for the caller).
	 */
	public boolean handedOver() {
		boolean interrupted = false;
		long deadline = System.nanoTime() + HAND_OVER_PATIENCE_NANOS;
		while (this.state.get() == RESERVED && deadline - System.nanoTime() > 0) {
			LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(10));
			interrupted |= Thread.interrupted();
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
		return this.state.get() == GRANTED;
	}

	/**
	 * Stop taking hand-overs. Returns true when a hand-over was granted first (the caller then owns the lease and
	 * must take or release it), false otherwise.
	 */
	public boolean leave() {
		for (;;) {
			int current = this.state.get();
			if (current == GRANTED) {
				return true;
			}
			if (current == LEFT) {
				return false;
			}
			if (current == RESERVED) {
				if (handedOver()) {
					return true;
				}
				if (this.state.get() == RESERVED) {
					return false; // the holder never finished; its lease expires at its ttl
				}
				continue;
			}
			if (this.state.compareAndSet(current, LEFT)) {
				return false;
			}
		}
	}

	/**
	 * Stop taking hand-overs without waiting (an asynchronous waiter's {@link #leave}): true when the waiter has left
	 * (now or before); false while a hand-over to it is under way or was granted. Then the holder's grant or revert
	 * signals it, and whoever that wakes settles the hand-over: takes the lease, or discards its owner id.
	 */
	public boolean tryLeave() {
		for (;;) {
			int current = this.state.get();
			if (current == LEFT) {
				return true;
			}
			if (current == RESERVED || current == GRANTED) {
				return false;
			}
			if (this.state.compareAndSet(current, LEFT)) {
				return true;
			}
		}
	}

	/** {@return whether the waiter is between attempts, where a holder may reserve it (for tests)} */
	public boolean betweenAttempts() {
		return this.state.get() == WAITING;
	}

	/** {@return whether a holder reserved the waiter and has not yet granted or reverted (for tests)} */
	public boolean reserved() {
		return this.state.get() == RESERVED;
	}

	/** {@return whether a holder granted this waiter the lease (see {@link #grantedToken()})} */
	public boolean granted() {
		return this.state.get() == GRANTED;
	}

	// holder side

	/** Whether a holder may hand this waiter its lease: a waiting thread, or an asynchronous waiter that takes them. */
	boolean takesHandOvers() {
		return this.takesHandOvers;
	}

	/** Reserve this waiter for a hand-over, if it takes them and is between attempts. */
	boolean reserve() {
		return this.takesHandOvers && this.state.compareAndSet(WAITING, RESERVED);
	}

	/**
	 * The lease is this waiter's now, with {@code token}; wake it. An asynchronous waiter's wake-up only schedules
	 * its acquisition's next step on the engine's threads: nothing of the caller runs on the granting thread.
	 */
	public void grant(long token, long sentAtNanos, int handOvers) {
		this.grantedToken = token;
		this.grantedAtNanos = sentAtNanos;
		this.grantedHandOvers = handOvers;
		this.state.set(GRANTED);
		signal();
	}

	public void markHandOverUnanswered() {
		this.handOverUnanswered = true;
	}

	public boolean handOverUnanswered() {
		return this.handOverUnanswered;
	}

	/** The hand-over did not happen: the waiter goes on waiting, and tries again at once. */
	public void revert() {
		this.state.compareAndSet(RESERVED, WAITING);
		signal();
	}

	public long grantedToken() {
		return this.grantedToken;
	}

	public long grantedAtNanos() {
		return this.grantedAtNanos;
	}

	public int grantedHandOvers() {
		return this.grantedHandOvers;
	}

}
