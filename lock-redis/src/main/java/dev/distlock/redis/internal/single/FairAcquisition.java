package dev.distlock.redis.internal.single;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.support.Backoff;
import dev.distlock.redis.internal.wait.Waiter;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition of a fair lock ({@link FairScripts}), for a waiting thread and an asynchronous owner alike. Each
 * attempt is one {@code FAIR_ACQUIRE} on the call pool (a blocking caller's first on its own thread): it takes the lease
 * or queues the caller in Redis. Between attempts it is a fair {@link Waiter} on its process's hand-over channel of the
 * key: a release hands it the lease in the script and names it there (or in the reply to a holder of this process),
 * and it enters without another round trip. A timer repeats the attempt every third of the entry ttl (the keepalive,
 * which also notices a lost message and an expired holder), at the holder's pttl, while unsubscribed and after
 * failures. At the deadline it makes a last attempt (unless one is under way: its reply is the last), which takes a
 * lease handed to it whose message did not come; then, as on cancellation or a final failure, it leaves with
 * {@code FAIR_LEAVE}, which passes on a lease handed to it meanwhile; an unanswered leave or call goes to the
 * {@link HoldReconciler}'s fair discard.
 * <p>
 * Invariants (guarded by {@code this}): at most one script call is in flight; the state moves WAITING to ACQUIRED, or
 * WAITING to LEAVING to DONE, never back; the leave is sent once, after the call in flight returned (so no late attempt
 * of this acquisition queues it again after it left); a lease is delivered once, and only while no call is in flight.
 * The last one matters because a call is sent some time after it is counted in flight (on the call pool, and on the
 * template path on a connection of its own): a hand-over that came meanwhile, delivered at once, let the caller run
 * and release before that call reached Redis, which then found the lock free and granted this owner a second lease
 * that nobody knew of. So a hand-over that comes while a call is in flight waits for that call's reply.
 * <p>
 * Lock order: messages reach it under the channel's monitor, so under this one nothing calls the ReleaseSubscriber.
 */
public final class FairAcquisition {

	private enum State { WAITING, ACQUIRED, LEAVING, DONE }

	private final FairEngine engine;

	private final LockRequest request;

	private final Attempt attempt;

	private final String handOverChannel; // where releases tell this process that one of its waiters got the lease

	private final long start, deadline;

	private final boolean mayWait;

	/** Whether a thread blocks on the result: it may be completed on the messaging thread (it only wakes the caller). */
	private final boolean blockingCaller;

	private final Backoff backoff = new Backoff();

	private final CompletableFuture<Optional<Lease>> result = new CompletableFuture<>() {

		@Override
		public boolean cancel(boolean mayInterruptIfRunning) {
			return giveUp(null, true) && super.cancel(mayInterruptIfRunning);
		}

	};

	private State state = State.WAITING;

	/**
	 * A script call is in flight; a wake came meanwhile; the leave was sent; the caller cancelled; the deadline passed
	 * (the reply of the attempt under way, or of the one it starts, is the last).
	 */
	private boolean inFlight, wakePending, leaveSent, cancelled, deadlinePassed;

	/** Send time of the latest call that ran with the caller queued: a hand-over ran after it. 0 before any. */
	private long queuedSentNanos;

	/** The token of a hand-over that came while a call was in flight, delivered once its reply is applied; else 0. */
	private long handOverPending;

	private @Nullable Waiter waiter;

	private @Nullable ScheduledFuture<?> nextAttempt, deadlineTimer;

	/** What the result completes with after the leave: null for "not acquired", else the failure. */
	private @Nullable RuntimeException outcome;

	public FairAcquisition(FairEngine engine, LockRequest request, String redisKey, LockOwner owner, long start,
			boolean blockingCaller) {
		this.engine = engine;
		this.request = request;
		this.attempt = engine.acquirer().newAttempt(request, redisKey, owner);
		this.handOverChannel = FairScripts.handOverChannel(this.attempt.channel, this.attempt.owner);
		this.start = start;
		this.deadline = start + request.waitTime().toNanos();
		this.mayWait = !request.waitTime().isZero();
		this.blockingCaller = blockingCaller;
	}

	/** Start; the first attempt runs on the calling thread when {@code inline}. */
	public CompletableFuture<Optional<Lease>> start(boolean inline) {
		if (this.mayWait) {
			// as a thread does: join the waiters before the first attempt (outside this monitor: see the lock order)
			Waiter registered = this.engine.subscriber().isSubscribed(this.handOverChannel) ? register() : null;
			synchronized (this) {
				this.waiter = registered;
				this.deadlineTimer = this.engine.schedule(this::deadlineReached, this.deadline - System.nanoTime());
			}
		}
		fire(inline);
		return this.result;
	}

	public CompletableFuture<Optional<Lease>> result() {
		return this.result;
	}

	/** A release message, a timer or the subscription's confirmation: attempt now, or once the one in flight ended. */
	private void wake() {
		Waiter current;
		synchronized (this) {
			current = this.waiter;
		}
		if (current != null) {
			current.signalled = false;
		}
		fire(false);
	}

	private void fire(boolean inline) {
		if (this.engine.calls() instanceof ExecutorService pool && pool.isShutdown()) {
			// the service closed: no more keepalives (its timers may still fire); leave the queue
			giveUp(new IllegalStateException("Lock service is closed; cannot acquire '"
					+ LogSafe.escape(this.request.key()) + "'"),
					false);
			return;
		}
		long sent;
		synchronized (this) {
			if (this.state != State.WAITING) {
				return;
			}
			if (this.inFlight) {
				this.wakePending = true;
				return;
			}
			this.inFlight = true;
			FairEngine.cancel(this.nextAttempt); // each reply schedules the next
			this.nextAttempt = null;
			sent = System.nanoTime();
		}
		Runnable call = () -> {
			long[] reply;
			try {
				reply = this.engine.acquire(this.attempt, this.mayWait);
			}
			catch (RuntimeException ex) {
				replied(sent, null, ex);
				return;
			}
			replied(sent, reply, null);
		};
		if (inline) {
			call.run();
		}
		else {
			this.engine.run(call);
		}
	}

	private void replied(long sent, long @Nullable [] reply, @Nullable RuntimeException ex) {
		boolean deliver = false, again = false, notAcquired = false, registerNow = false;
		boolean subscribed = this.engine.subscriber().isSubscribed(this.handOverChannel); // not under this monitor
		long handedOver;
		synchronized (this) {
			this.inFlight = false;
			handedOver = this.handOverPending;
			this.handOverPending = 0;
			if (ex != null) {
				this.attempt.unanswered |= RedisFailures.mayHaveWritten(ex); // may run yet: queue it, take the lease
				if (this.state == State.WAITING) {
					LockUnavailableException failed = AcquireCall.failure(this.request, this.attempt.redisKey, ex);
					if (failed instanceof LockAccessDeniedException || !this.mayWait
							|| System.nanoTime() - this.deadline >= 0) {
						this.state = State.LEAVING;
						this.outcome = (failed instanceof LockAccessDeniedException || !this.mayWait) ? failed
								: AcquireCall.unansweredWithin(this.request, failed);
					}
					else {
						this.nextAttempt = this.engine.schedule(this::wake, this.backoff.nextNanos());
					}
				}
			}
			else if (reply[0] > 0) {
				if (this.state == State.WAITING) {
					this.state = State.ACQUIRED;
					deliver = true;
				}
				// ACQUIRED: the same lease, delivered by its hand-over message; LEAVING: the leave passes it on
			}
			else {
				this.backoff.reset();
				if (reply[2] > 0) {
					this.queuedSentNanos = sent;
				}
				if (this.state == State.WAITING) {
					if (!this.mayWait) {
						this.state = State.DONE;
						notAcquired = true;
					}
					else if (this.deadlinePassed) {
						this.state = State.LEAVING; // that was the last attempt
					}
					else if (this.waiter == null) {
						registerNow = true; // after this monitor is released: see the lock order
					}
					else {
						scheduleNext(reply[1], subscribed);
					}
				}
			}
			if (this.wakePending && this.state == State.WAITING) {
				this.wakePending = false;
				again = true;
			}
		}
		if (registerNow) {
			registerAndPoll();
		}
		if (deliver) {
			deliver(reply[1], sent, 0);
		}
		else if (handedOver != 0) {
			handedOver(handedOver); // it came while this call was in flight; the reply did not take the lease
		}
		else if (notAcquired) {
			end(false);
			this.engine.discardIfUnanswered(this.request, this.attempt);
			this.result.complete(this.engine.acquirer().notAcquired(this.request, this.start));
		}
		leaveIfDue();
		if (again) {
			fire(false);
		}
	}

	/** After the first reply that queued the caller: register, poll until subscribed; undone if it came too late. */
	private void registerAndPoll() {
		Waiter registered = register();
		boolean stale;
		synchronized (this) {
			stale = this.state != State.WAITING || this.waiter != null;
			if (!stale) {
				this.waiter = registered;
				FairEngine.cancel(this.nextAttempt);
				this.nextAttempt = this.engine.schedule(this::wake, LeaseAcquirer.pollNanos());
			}
		}
		if (stale) {
			this.engine.subscriber().unregister(registered, false);
			return;
		}
		registered.subscribed().whenComplete((done, failed) -> wake());
	}

	/** After a reply that queued a registered caller: keep alive and watch the holder. Guarded by this. */
	private void scheduleNext(long holderTtlMillis, boolean subscribed) {
		long now = System.nanoTime();
		long delay = this.engine.nextAttemptNanos(holderTtlMillis, subscribed);
		if (now + delay - this.deadline < 0) {
			this.nextAttempt = this.engine.schedule(this::wake, delay);
		}
	}

	/** Never under this monitor (see the lock order); the caller stores the waiter. */
	private Waiter register() {
		return this.engine.subscriber().registerFair(this.handOverChannel, this.attempt.owner,
				this.request.effectiveName(), this.attempt.ttlMillis, this::wake, this::handedOver);
	}

	/**
	 * A fair release handed this acquisition the lease with {@code token} (under the channel's monitor). The grant
	 * lasts at least one entry ttl, capped by the lease time, from the send of the latest call that found it queued.
	 */
	private void handedOver(long token) {
		long queuedAt;
		synchronized (this) {
			if (this.state != State.WAITING) {
				return; // ended: its leave passes the lease on
			}
			if (this.inFlight) {
				this.handOverPending = token; // delivered when the call in flight has reached Redis and returned
				return;
			}
			queuedAt = this.queuedSentNanos;
			if (queuedAt != 0) {
				this.state = State.ACQUIRED;
			}
		}
		if (queuedAt == 0) {
			// no reply said queued yet, so no lower bound of the grant is known: one attempt finds the lease ours and
			// raises it to the lease time
			fire(false);
			return;
		}
		deliver(token, queuedAt, this.engine.grantedUntil(queuedAt, this.attempt));
	}

	/** The lease is this acquisition's (see {@link FairEngine#newLease}). */
	private void deliver(long token, long sent, long grantedUntil) {
		end(true);
		Lease lease = this.engine.newLease(this.request, this.attempt, token, sent, grantedUntil, this.start);
		if (this.blockingCaller) {
			this.result.complete(Optional.of(lease));
		}
		else {
			// not on the messaging thread: callers chain work
			this.engine.run(() -> this.result.complete(Optional.of(lease)));
		}
	}

	/** The last attempt, unless one is under way: a lease handed over by a message that did not come is taken. */
	private void deadlineReached() {
		synchronized (this) {
			this.deadlinePassed = true;
		}
		fire(false);
	}

	/**
	 * End the wait without a lease ({@code failed} or not acquired); {@code cancel} for a cancellation. Returns false
	 * when the lease was delivered already.
	 */
	public boolean giveUp(@Nullable RuntimeException failed, boolean cancel) {
		synchronized (this) {
			if (this.state == State.ACQUIRED) {
				return false;
			}
			if (this.state == State.WAITING) {
				this.state = State.LEAVING;
				this.outcome = failed;
			}
			this.cancelled |= cancel;
		}
		leaveIfDue();
		return true;
	}

	/** Send the leave once no call is in flight, then complete the result. */
	private void leaveIfDue() {
		synchronized (this) {
			if (this.state != State.LEAVING || this.inFlight || this.leaveSent) {
				return;
			}
			this.leaveSent = true;
		}
		this.engine.run(this::leave);
	}

	private void leave() {
		if (this.mayWait || this.attempt.unanswered) {
			this.engine.leave(this.attempt); // an unanswered leave marks the attempt
			// a late call may queue it (or take the lease) again: the reconciler leaves again
			this.engine.discardIfUnanswered(this.request, this.attempt);
		}
		RuntimeException failed;
		synchronized (this) {
			this.state = State.DONE;
			failed = this.outcome;
		}
		end(false);
		if (failed != null) {
			this.result.completeExceptionally(failed);
		}
		else if (!this.cancelled) {
			this.result.complete(this.engine.acquirer().notAcquired(this.request, this.start));
		}
	}

	/** Stop waiting: timers off, the waiter unregistered. */
	private void end(boolean acquired) {
		Waiter registered;
		synchronized (this) {
			registered = this.waiter;
			this.waiter = null;
			FairEngine.cancel(this.nextAttempt);
			FairEngine.cancel(this.deadlineTimer);
		}
		if (registered != null) {
			this.engine.subscriber().unregister(registered, acquired);
		}
	}

}
