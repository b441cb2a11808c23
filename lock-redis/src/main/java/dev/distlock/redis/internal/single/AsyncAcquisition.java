package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.Backoff;
import dev.distlock.redis.internal.wait.Waiter;
import org.jspecify.annotations.Nullable;

/**
 * One asynchronous acquisition: {@link LeaseAcquirer}'s acquisition without a thread that waits. Each attempt is one
 * script call: on Lettuce's asynchronous commands where the engine takes the Lettuce-native path, else a blocking
 * call on the engine's bounded call pool (a short call, never a wait); replies are applied on that pool. Between
 * attempts nothing runs: the acquisition is a {@link Waiter} without a thread on the release channel, woken by the
 * release message or a release in this process, and a timer on the engine's scheduler retries when the holder's lease
 * would run out, polls while the channel is not subscribed, backs off while Redis does not answer, and makes a last
 * attempt at the wait's deadline (unless one was answered after it) before it ends the wait.
 * <p>
 * As a waiting thread, it may be handed the lease by a holder of this process (issue 31; kinds that hand over locally
 * only): the holder reserves its waiter between attempts, and its grant (or revert) wakes the acquisition, whose
 * future takes the lease on the call pool, never on the holder's thread. The acquisition never waits for a hand-over:
 * while its waiter is reserved it neither attempts nor ends at its deadline (the grant or revert wakes it), and an end
 * that cannot wait (the caller's cancellation, a failure) leaves the reservation to be settled when it is: a lease
 * granted after the end, or a hand-over that got no answer, has its owner id handed to the {@link HoldReconciler}.
 * <p>
 * Invariants (all mutable state is guarded by {@code this}):
 * <ul>
 * <li>At most one attempt is in flight ({@code attempting}); a wake-up that comes meanwhile is kept
 * ({@code wakePending}) and starts the next attempt as soon as that one's reply is applied.</li>
 * <li>{@code done} is set once, by whoever ends the acquisition first: the reply that acquired, the deadline, a
 * failure, or the caller's cancellation. After it, a reply that acquired (or a call that went unanswered) is not
 * delivered: its owner id is handed to the {@link HoldReconciler}, which deletes whatever Redis holds of it. So a lease
 * is either delivered through the future or deleted, never both nor neither.</li>
 * <li>The waiter is registered at most once and unregistered exactly once, when the acquisition ends. An attempt
 * starts only when its waiter (once there is one) went from WAITING to ATTEMPTING, so no hand-over meets it.</li>
 * <li>A hand-over granted to the owner id is delivered through the future (if it came before the end) or discarded
 * (after), once ({@link AsyncHandOver}).</li>
 * </ul>
 */
public final class AsyncAcquisition {

	private final AsyncEngine engine;

	private final LockKind kind;

	private final LockRequest request;

	private final String redisKey;

	private final LockOwner owner;

	private final long start = System.nanoTime();

	private final long deadline;

	private final boolean mayWait;

	private final Backoff backoff = new Backoff();

	private final CompletableFuture<Optional<Lease>> result = new CompletableFuture<>() {
		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			return cancelled() && super.cancel(mayInterruptIfRunning);
		}
	};

	private @Nullable Attempt attempt;

	/** Its waiter, the hand-overs to it, and the fate of its owner id. */
	private final AsyncHandOver handOver;

	private @Nullable ScheduledFuture<?> timer;

	private boolean attempting, wakePending, done;

	/** The latest attempt was answered at or after the deadline: it was the last one. */
	private boolean lastAnswered;

	/** Why the last attempt got no answer, or null when it got one. */
	private @Nullable LockUnavailableException failure;

	AsyncAcquisition(AsyncEngine engine, LockKind kind, LockRequest request, String redisKey, LockOwner owner) {
		this.engine = engine;
		this.kind = kind;
		this.request = request;
		this.redisKey = redisKey;
		this.owner = owner;
		this.deadline = this.start + request.waitTime().toNanos();
		this.mayWait = !request.waitTime().isZero();
		this.handOver = new AsyncHandOver(engine, this, request, kind);
	}

	/** Run {@code work} on the call pool, then {@code then} with its result; a closed pool fails the acquisition. */
	private <T> void call(AsyncEngine.CallWork<T> work, AsyncEngine.Reply<T> then) {
		if (!this.engine.call(work, then)) {
			closed(null);
		}
	}

	private void closed(@Nullable Exception cause) {
		fail(new IllegalStateException("Lock service is closed; cannot acquire '" + LogSafe.escape(this.request.key())
				+ "'", cause));
	}

	CompletableFuture<Optional<Lease>> start() {
		LeaseEntry held = this.engine.registry().heldBy(this.redisKey, this.owner, this.request.mode());
		call(() -> (held != null) ? this.engine.reentry().reenterOnce(this.request, held, this.start) : null, this::started);
		return this.result;
	}

	private void started(@Nullable Lease reentered, @Nullable Exception ex) {
		if (ex != null) {
			fail(ex);
			return;
		}
		if (reentered != null) {
			if (claimEnd()) {
				this.result.complete(Optional.of(reentered));
			}
			else {
				reentered.close(); // cancelled meanwhile
			}
			return;
		}
		if (this.kind.reacquireAsync(this.engine, this.request, this.redisKey, this.owner, this.result, this::claimEnd)) {
			return; // the owner's lease was gone: its kind acquires anew its own way (a fair one queued in Redis)
		}
		Attempt fresh = this.engine.acquirer().newAttempt(this.request, this.redisKey, this.owner);
		boolean join;
		synchronized (this) {
			if (this.done) {
				return; // cancelled before its first attempt
			}
			this.attempt = fresh;
			// as a thread does: where others of this process wait already, wait with them before the first attempt
			join = this.mayWait && (this.engine.subscriber().isSubscribed(fresh.channel)
					|| this.engine.subscriber().yieldingUntil(fresh.channel) != 0);
			if (join) {
				this.handOver.register(fresh);
			}
		}
		wake();
	}

	/** A release, a timer or the subscription's confirmation: attempt now, or as soon as the one in flight ended. */
	void wake() {
		if (this.handOver.settled(true)) { // on the scheduler's thread: a lease is taken on the call pool
			return;
		}
		Attempt current;
		boolean attemptNow;
		synchronized (this) {
			current = this.attempt;
			if (this.done || current == null) {
				return;
			}
			if (this.attempting) {
				this.wakePending = true;
				return;
			}
			cancelTimer();
			Waiter waiting = this.handOver.waiter();
			// every wait ends with one last attempt: a release whose message did not come is found then
			boolean late = System.nanoTime() - this.deadline >= 0;
			attemptNow = waiting == null || !late || !this.lastAnswered;
			if (attemptNow) {
				long yieldUntil = late ? 0 : this.engine.subscriber().yieldingUntil(current.channel);
				if (yieldUntil != 0) {
					schedule(LeaseAcquirer.earlier(yieldUntil, this.deadline));
					return;
				}
				if (waiting != null && !waiting.startAttempt()) {
					return; // a holder of this process is handing it the lease: its grant or revert wakes it again
				}
				this.attempting = true;
				this.wakePending = false;
				if (waiting != null) {
					waiting.signalled = false; // this attempt uses the wake-up
				}
			}
			else {
				if (waiting != null && !waiting.tryLeave()) {
					return; // as above: the deadline waits for the hand-over under way, as a thread does
				}
				this.done = true; // the wait's deadline
			}
		}
		if (!attemptNow) {
			endWithout(current);
			return;
		}
		long sent = System.nanoTime();
		this.engine.sendAttempt(this.request, current, this.mayWait, (reply, ex) -> replied(current, sent, reply, ex),
				() -> closed(null));
	}

	private void replied(Attempt current, long sent, long @Nullable [] reply, @Nullable Exception ex) {
		boolean acquired = reply != null && reply[0] > 0;
		boolean abandoned;
		synchronized (this) {
			this.attempting = false;
			this.lastAnswered = System.nanoTime() - this.deadline >= 0;
			abandoned = this.done;
			if (!abandoned && acquired) {
				this.done = true;
				this.handOver.leased();
			}
			else if (!acquired) {
				this.handOver.endAttempt(); // a holder may reserve its waiter again
			}
		}
		if (abandoned) {
			if (acquired || current.unanswered) {
				this.handOver.discard(current); // cancelled meanwhile
			}
			return;
		}
		if (acquired) {
			this.handOver.unregister(true);
			LeaseEntry entry = this.engine.acquirer().newEntry(this.request, current, reply[1], sent, 0);
			this.result.complete(Optional.of(this.engine.acquirer().newLease(this.request, entry, sent, this.start)));
			return;
		}
		if (ex != null) { // a refused request is final: Redis answered that the request itself is wrong
			Exception failure = (ex instanceof RequestRefused) ? ex : AcquireCall.failureOf(this.request,
					current.redisKey, ex);
			if (!this.mayWait || !(failure instanceof LockUnavailableException unavailable)
					|| unavailable instanceof LockAccessDeniedException) {
				if (claimEnd()) {
					end(current, failure);
				}
				return;
			}
			synchronized (this) {
				if (this.done) {
					return; // cancelled since: the cancellation handed an unanswered call to the reconciler
				}
				this.failure = unavailable;
				this.handOver.register(current);
				next(System.nanoTime() + this.backoff.nextNanos());
			}
			return;
		}
		if (!this.mayWait) {
			if (claimEnd()) {
				endWithout(current);
			}
			return;
		}
		synchronized (this) {
			if (this.done) {
				return; // cancelled since
			}
			this.failure = null;
			this.backoff.reset();
			boolean first = this.handOver.waiter() == null;
			this.handOver.register(current);
			long now = System.nanoTime();
			long wakeAt = now + LeaseAcquirer.holderTtlNanos(reply[1]);
			if (first || !this.engine.subscriber().isSubscribed(current.channel) || LeaseStore.unannounced(reply)) {
				// until the subscription is confirmed, a release may go unheard: poll (its confirmation wakes it too);
				// so may every release of a holder whose user may not publish
				wakeAt = LeaseAcquirer.earlier(wakeAt, now + LeaseAcquirer.pollNanos());
			}
			next(wakeAt);
		}
	}

	/** Attempt again at once if woken meanwhile, else at {@code wakeAt} (or the deadline, if earlier). */
	private void next(long wakeAt) {
		if (this.wakePending || this.handOver.signalled()) {
			schedule(System.nanoTime());
		}
		else {
			schedule(LeaseAcquirer.earlier(wakeAt, this.deadline));
		}
	}

	private void schedule(long atNanos) {
		cancelTimer();
		try {
			this.timer = this.engine.timers().schedule(this::wake, Math.max(0, atNanos - System.nanoTime()),
					TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			closed(ex);
		}
	}

	private void cancelTimer() {
		ScheduledFuture<?> pending = this.timer;
		if (pending != null) {
			pending.cancel(false);
			this.timer = null;
		}
	}

	/** The caller cancelled: end here; a reply still on its way is discarded when it comes. */
	private boolean cancelled() {
		Attempt current;
		boolean inFlight;
		synchronized (this) {
			if (this.done) {
				return false;
			}
			this.done = true;
			cancelTimer();
			current = this.attempt;
			inFlight = this.attempting;
		}
		this.handOver.ended(current, !inFlight); // a reply on its way: its owner id goes when it comes
		return true;
	}

	/** Take the end of the acquisition: false when it ended already (cancelled). */
	private synchronized boolean claimEnd() {
		if (this.done) {
			return false;
		}
		this.done = true;
		return true;
	}

	/** Take the end of the acquisition with a lease handed over: false when it ended already. */
	synchronized boolean claimLease() {
		boolean claimed = claimEnd();
		if (claimed) {
			this.handOver.leased();
		}
		return claimed;
	}

	synchronized boolean ended() {
		return this.done;
	}

	/** The wait reached its deadline: empty, or the failure of the last attempt if it went unanswered. */
	private void endWithout(Attempt current) {
		LockUnavailableException last;
		synchronized (this) {
			last = this.failure;
		}
		end(current, (last != null) ? AcquireCall.unansweredWithin(this.request, last) : null);
	}

	private void fail(Throwable ex) {
		Attempt current;
		synchronized (this) {
			current = this.attempt;
		}
		end(current, ex);
	}

	/**
	 * End without a lease: the waiter leaves (passing on a wake-up it did not use), an owner id that may hold something
	 * in Redis goes to the reconciler, and the caller hears empty or {@code failure}.
	 */
	private void end(@Nullable Attempt current, @Nullable Throwable failure) {
		synchronized (this) {
			this.done = true;
			cancelTimer();
		}
		this.handOver.ended(current, true);
		if (failure == null) {
			this.result.complete(this.engine.acquirer().notAcquired(this.request, this.start));
			return;
		}
		if (failure instanceof LockUnavailableException unavailable) {
			Duration waited = Duration.ofNanos(System.nanoTime() - this.start);
			this.engine.listeners().forEach(listener -> listener.notAcquired(this.request, waited, unavailable));
		}
		this.result.completeExceptionally(failure);
	}

	/** A holder of this process granted the lease ({@code granted}) to the owner id of {@code current}: take it. */
	void take(Attempt current, Waiter granted) {
		this.handOver.unregister(true);
		LeaseEntry entry = this.engine.acquirer().newEntry(this.request, current, granted.grantedToken(),
				granted.grantedAtNanos(), granted.grantedHandOvers());
		this.result.complete(Optional.of(this.engine.acquirer().newLease(this.request, entry,
				granted.grantedAtNanos(), this.start)));
	}

	synchronized @Nullable Attempt attempt() {
		return this.attempt;
	}

}
