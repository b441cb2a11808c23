package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;

import org.jspecify.annotations.Nullable;

/**
 * One acquisition of a fair lock ({@link FairScripts}), for a waiting thread and an asynchronous owner alike: no
 * thread waits inside it. Each attempt is one {@code FAIR_ACQUIRE} on the engine's call pool (the blocking caller's
 * first one on its own thread); it takes the lease or queues the caller in Redis. Between attempts the acquisition is a
 * fair {@link Waiter} on the release channel: a fair release hands it the lease in the script and names it in the
 * message (or, from a holder of this process, in the script's reply), and it enters without another round trip. A
 * timer repeats the attempt every third of the entry ttl (the keepalive of its queue entry, which also notices a
 * hand-over whose message was lost and a holder whose lease expired), when the holder's lease would run out, while the
 * channel is not subscribed, and after failures; at the deadline, on cancellation or a final failure it leaves the
 * queue with {@code FAIR_LEAVE}, which passes on a lease handed to it meanwhile. A leave without answer, or a call
 * that went unanswered, goes to the {@link HoldReconciler}'s fair discard; an entry nobody keeps alive expires within
 * one entry ttl either way.
 * <p>
 * Invariants (guarded by {@code this}): at most one script call is in flight; the state moves WAITING to ACQUIRED, or
 * WAITING to LEAVING to DONE, never back; the leave is sent once, after the call in flight returned (so no late attempt
 * of this acquisition queues it again after it left); a lease is delivered once.
 */
final class FairAcquisition {

	/** What fair acquisitions work with. */
	record Engine(LeaseAcquirer acquirer, FairStore store, LeaseStore leaseStore, ReleaseSubscriber subscriber,
			LeaseWatchdog watchdog, LeaseRegistry registry, HoldReconciler reconciler, List<LockListener> listeners,
			Executor calls, ScheduledExecutorService timers, long entryTtlMillis) {
	}

	private enum State {
		WAITING, ACQUIRED, LEAVING, DONE
	}

	private final Engine engine;

	private final LockRequest request;

	private final Attempt attempt;

	private final long start;

	private final long deadline;

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

	private boolean inFlight;

	private boolean wakePending;

	private boolean leaveSent;

	private boolean cancelled;

	/** Send time of the latest call that ran with the caller queued: a hand-over ran after it. 0 before any. */
	private long queuedSentNanos;

	/** A hand-over that came while the reply of the call that queued the caller was still on its way; else 0. */
	private long handedToken;

	private @Nullable Waiter waiter;

	private @Nullable ScheduledFuture<?> nextAttempt;

	private @Nullable ScheduledFuture<?> deadlineTimer;

	private @Nullable LockUnavailableException failure;

	/** What the result completes with after the leave: null for "not acquired", else the failure. */
	private @Nullable RuntimeException outcome;

	FairAcquisition(Engine engine, LockRequest request, String redisKey, LockOwner owner, long start,
			boolean blockingCaller) {
		this.engine = engine;
		this.request = request;
		this.attempt = engine.acquirer().newAttempt(request, redisKey, owner);
		this.start = start;
		this.deadline = start + request.waitTime().toNanos();
		this.mayWait = !request.waitTime().isZero();
		this.blockingCaller = blockingCaller;
	}

	/** Start; the first attempt runs on the calling thread when {@code inline}. */
	CompletableFuture<Optional<Lease>> start(boolean inline) {
		if (this.mayWait) {
			synchronized (this) {
				if (this.engine.subscriber().isSubscribed(this.attempt.channel)) {
					register(); // as a thread does: join the waiters before the first attempt
				}
				this.deadlineTimer = schedule(this::deadlineReached, this.deadline - System.nanoTime());
			}
		}
		fire(inline);
		return this.result;
	}

	/**
	 * Wait for the result on the calling thread; an interrupt cancels the acquisition (a lease granted at that moment
	 * is released again) and is thrown.
	 */
	Optional<Lease> await() throws InterruptedException {
		try {
			// the deadline timer ends it; the margin covers its leave, itself bounded by the command timeout
			return this.result.get(this.request.waitTime().toMillis() + TimeUnit.MINUTES.toMillis(2),
					TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			if (!giveUp(null, true)) {
				Optional<Lease> granted = this.result.getNow(Optional.empty());
				granted.ifPresent(Lease::close);
			}
			throw ex;
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (TimeoutException ex) {
			giveUp(null, true);
			throw new LockUnavailableException(this.request.key(), "Could not acquire fair lock '"
					+ this.request.key() + "': the acquisition did not end within its wait", ex);
		}
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
			sent = System.nanoTime();
		}
		Runnable call = () -> {
			long[] reply;
			try {
				reply = this.engine.store().acquire(this.attempt.redisKey, this.attempt.owner, this.attempt.ttlMillis,
						this.engine.entryTtlMillis(), this.mayWait);
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
			run(call);
		}
	}

	private void replied(long sent, long @Nullable [] reply, @Nullable RuntimeException ex) {
		boolean deliver = false;
		boolean again = false;
		boolean notAcquired = false;
		long handed = 0;
		synchronized (this) {
			this.inFlight = false;
			if (this.state == State.WAITING && this.handedToken != 0 && (reply == null || reply[0] == 0)) {
				// the hand-over named this owner, so this call queued it and ran before the hand-over
				this.state = State.ACQUIRED;
				handed = this.handedToken;
			}
			if (ex != null) {
				this.attempt.unanswered = true; // it may run yet: queue this owner, or take the lease
				if (this.state == State.WAITING) {
					LockUnavailableException failed = AcquireCall.failure(this.request, this.attempt.redisKey, ex);
					if (failed instanceof LockAccessDeniedException || !this.mayWait
							|| System.nanoTime() - this.deadline >= 0) {
						this.state = State.LEAVING;
						this.outcome = (failed instanceof LockAccessDeniedException || !this.mayWait) ? failed
								: AcquireCall.unansweredWithin(this.request, failed);
					}
					else {
						this.failure = failed;
						this.nextAttempt = schedule(this::wake, this.backoff.nextNanos());
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
				this.failure = null;
				this.backoff.reset();
				if (reply[2] > 0) {
					this.queuedSentNanos = sent;
				}
				if (this.state == State.WAITING) {
					if (!this.mayWait) {
						this.state = State.DONE;
						notAcquired = true;
					}
					else {
						scheduleNext(reply[1]);
					}
				}
			}
			if (this.wakePending && this.state == State.WAITING) {
				this.wakePending = false;
				again = true;
			}
		}
		if (handed != 0) {
			deliver(handed, sent, sent + TimeUnit.MILLISECONDS.toNanos(grantMillis()));
		}
		else if (deliver) {
			deliver(reply[1], sent, 0);
		}
		else if (notAcquired) {
			end(false);
			if (this.attempt.unanswered) {
				discardLater();
			}
			this.result.complete(this.engine.acquirer().notAcquired(this.request, this.start));
		}
		leaveIfDue();
		if (again) {
			fire(false);
		}
	}

	/** After a reply that queued the caller: register on the channel first, then keep alive and watch the holder. */
	private void scheduleNext(long holderTtlMillis) {
		long now = System.nanoTime();
		if (this.waiter == null) {
			Waiter registered = register();
			registered.subscribed().whenComplete((done, failed) -> wake());
			this.nextAttempt = schedule(this::wake, LeaseAcquirer.pollNanos());
			return;
		}
		long delay = TimeUnit.MILLISECONDS.toNanos(this.engine.entryTtlMillis()) / 3;
		if (holderTtlMillis >= 0) {
			delay = Math.min(delay, LeaseAcquirer.holderTtlNanos(holderTtlMillis));
		}
		if (!this.engine.subscriber().isSubscribed(this.attempt.channel)) {
			delay = Math.min(delay, LeaseAcquirer.pollNanos()); // no message can come: poll
		}
		if (now + delay - this.deadline < 0) {
			this.nextAttempt = schedule(this::wake, delay);
		}
	}

	/** Guarded by this. */
	private Waiter register() {
		Waiter registered = this.engine.subscriber().registerFair(this.attempt.channel, this.attempt.owner,
				this.request.effectiveName(), this.attempt.ttlMillis, this::wake, this::handedOver);
		this.waiter = registered;
		return registered;
	}

	/**
	 * A fair release handed this acquisition the lease with {@code token} (runs under the channel's monitor). The
	 * grant is short (see {@link FairScripts}): it lasts at least one entry ttl, capped by the lease time, from the
	 * send time of the latest call that found this owner queued, since the hand-over ran after that call.
	 */
	private void handedOver(long token) {
		long queuedAt;
		synchronized (this) {
			if (this.state != State.WAITING) {
				return; // ended: its leave passes the lease on
			}
			if (this.queuedSentNanos == 0) {
				this.handedToken = token; // queued by the call in flight: its reply delivers
				return;
			}
			this.state = State.ACQUIRED;
			queuedAt = this.queuedSentNanos;
		}
		deliver(token, queuedAt, queuedAt + TimeUnit.MILLISECONDS.toNanos(grantMillis()));
	}

	/** The shortest grant a hand-over gives (from when the entry's last keepalive ran). */
	private long grantMillis() {
		return Math.min(this.engine.entryTtlMillis(), this.attempt.ttlMillis);
	}

	/**
	 * The lease is this acquisition's: a lease entry (watched by the watchdog) and the handle. A lease it was handed
	 * ({@code grantedUntil} not 0) lasts only the short grant in Redis: the watchdog's first renewal raises it to the
	 * lease time, in the first half of the grant; a fixed lease gets that once, by an extension on the call pool.
	 */
	private void deliver(long token, long sent, long grantedUntil) {
		end(true);
		LeaseEntry entry = new LeaseEntry(this.request.key(), this.attempt.redisKey, this.attempt.channel,
				this.attempt.owner, this.request.effectiveName(), token, this.attempt.ttlMillis,
				this.request.autoRenew(), sent, 0, this.attempt.lockOwner, LockMode.FAIR);
		if (grantedUntil != 0) {
			long now = System.nanoTime();
			long renewAt = now + Math.max(0, Math.min(this.engine.watchdog().intervalNanos(this.attempt.ttlMillis),
					(grantedUntil - now) / 2));
			entry.grantedUntil(grantedUntil, renewAt);
		}
		this.engine.registry().add(entry);
		this.engine.watchdog().register(entry);
		if (grantedUntil != 0 && !this.request.autoRenew()) {
			run(() -> extendFixed(entry));
		}
		Lease lease = this.engine.acquirer().newLease(this.request, entry, sent, this.start);
		if (this.blockingCaller) {
			this.result.complete(Optional.of(lease));
		}
		else {
			run(() -> this.result.complete(Optional.of(lease))); // not on the messaging thread: callers chain work
		}
	}

	/** The one-shot extension of a handed fixed lease to its lease time; a lease already released is left alone. */
	private void extendFixed(LeaseEntry entry) {
		if (entry.state() != LeaseEntry.State.HELD) {
			return;
		}
		long sent = System.nanoTime();
		try {
			long remaining = this.engine.leaseStore().extend(entry.redisKey, entry.owner, entry.token,
					entry.ttlMillis(), false);
			if (remaining >= 0) {
				entry.confirmed(sent, remaining);
			}
		}
		catch (RuntimeException ex) {
			// the lease keeps its grant; the watchdog ends it as expired when that runs out
		}
	}

	private void deadlineReached() {
		LockUnavailableException last;
		synchronized (this) {
			last = this.failure;
		}
		giveUp((last != null) ? AcquireCall.unansweredWithin(this.request, last) : null, false);
	}

	/**
	 * End the wait without a lease ({@code failed} or not acquired); {@code cancel} for a cancellation. Returns false
	 * when the lease was delivered already.
	 */
	private boolean giveUp(@Nullable RuntimeException failed, boolean cancel) {
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
		run(this::leave);
	}

	private void leave() {
		if (this.mayWait || this.attempt.unanswered) {
			try {
				this.engine.store().leave(this.attempt.redisKey, this.attempt.owner, this.attempt.channel);
			}
			catch (RuntimeException ex) {
				this.attempt.unanswered = true;
			}
			if (this.attempt.unanswered) {
				discardLater(); // a late call may queue it (or take the lease) again: the reconciler leaves again
			}
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

	private void discardLater() {
		this.engine.reconciler().discard(this.request.key(), this.attempt.redisKey, this.attempt.owner,
				this.attempt.channel, true);
	}

	/** Stop waiting: timers off, the waiter unregistered. */
	private void end(boolean acquired) {
		Waiter registered;
		synchronized (this) {
			registered = this.waiter;
			this.waiter = null;
			cancel(this.nextAttempt);
			cancel(this.deadlineTimer);
		}
		if (registered != null) {
			this.engine.subscriber().unregister(registered, acquired);
		}
	}

	private static void cancel(@Nullable ScheduledFuture<?> timer) {
		if (timer != null) {
			timer.cancel(false);
		}
	}

	private @Nullable ScheduledFuture<?> schedule(Runnable action, long delayNanos) {
		try {
			return this.engine.timers().schedule(action, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			return null; // the service closed
		}
	}

	/** Run on the call pool; once the service is closed, on the calling thread. */
	private void run(Runnable work) {
		try {
			this.engine.calls().execute(work);
		}
		catch (RejectedExecutionException ex) {
			work.run();
		}
	}

	@Override
	public String toString() {
		return "fair acquisition of '" + this.request.key() + "' (owner " + this.attempt.owner + ", "
				+ Duration.ofNanos(System.nanoTime() - this.start) + " so far)";
	}

}
