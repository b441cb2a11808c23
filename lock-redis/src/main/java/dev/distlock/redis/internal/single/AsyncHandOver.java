package dev.distlock.redis.internal.single;

import java.util.concurrent.RejectedExecutionException;

import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.wait.Waiter;
import org.jspecify.annotations.Nullable;

/**
 * The waiting side of one {@link AsyncAcquisition}: its {@link Waiter} on the release channel, what wakes it, and the
 * hand-overs of holders of this process (issue 31), with the fate of its owner id. A holder may hand the lease to the
 * waiter between the acquisition's attempts (as to a waiting thread, see {@link Waiter}); nothing waits for that
 * hand-over: the holder's grant or revert wakes the acquisition, which settles it here. A lease granted before the
 * acquisition ended goes to the caller's future, on the call pool; one granted after it (the caller cancelled, the
 * acquisition failed), and any lease a holder's unanswered hand-over may yet give the owner id once the acquisition
 * ended without one, goes to the {@link HoldReconciler}, which deletes it.
 * <p>
 * Invariants: {@code waiter} is guarded by the acquisition's monitor, {@code leased} and {@code discarded} by this
 * object's, which is taken after the acquisition's, never before it. {@code leased} and {@code discarded} are each
 * set at most once and never both, so the owner id's lease is delivered or deleted, never both nor neither. The waiter
 * is kept ({@code joined}) after the acquisition unregistered it, so that a reservation made before the end is settled
 * after it.
 */
final class AsyncHandOver {

	private final AsyncEngine engine;

	private final AsyncAcquisition acquisition;

	private final LockRequest request;

	private final LockKind kind;

	/** The registered waiter, until it is unregistered (guarded by the acquisition's monitor). */
	private @Nullable Waiter waiter;

	/** The waiter once registered, for good. */
	private volatile @Nullable Waiter joined;

	/** A lease of the owner id went to the caller (by the acquisition's reply or a hand-over). */
	private boolean leased;

	/** The owner id went to the reconciler. */
	private boolean discarded;

	AsyncHandOver(AsyncEngine engine, AsyncAcquisition acquisition, LockRequest request, LockKind kind) {
		this.engine = engine;
		this.acquisition = acquisition;
		this.request = request;
		this.kind = kind;
	}

	/** {@return the registered waiter, or null} (under the acquisition's monitor) */
	@Nullable Waiter waiter() {
		return this.waiter;
	}

	/** After an attempt that did not acquire (under the acquisition's monitor): holders may reserve the waiter again. */
	void endAttempt() {
		Waiter registered = this.waiter;
		if (registered != null) {
			registered.endAttempt();
		}
	}

	/** {@return whether a release woke the waiter since its last attempt} (under the acquisition's monitor) */
	boolean signalled() {
		Waiter registered = this.waiter;
		return registered != null && registered.signalled;
	}

	/**
	 * Register the waiter of {@code current} if there is none yet (under the acquisition's monitor); holders of this
	 * process may reserve it from now on, if its kind hands over locally.
	 */
	void register(Attempt current) {
		if (this.waiter == null) {
			Waiter registered = this.engine.subscriber().registerAsync(current.channel, current.owner,
					this.request.effectiveName(), current.ttlMillis, current.label, this.kind.handsOverLocally(),
					this::wakeSoon);
			this.waiter = registered;
			this.joined = registered;
			registered.subscribed().whenComplete((confirmed, failed) -> wakeSoon());
		}
	}

	/**
	 * Unregister the waiter, if registered; {@code acquired}: with a lease. It leaves unless a hand-over to it is under
	 * way or granted: that one's grant or revert wakes the acquisition, which settles it ({@link #settled}).
	 */
	void unregister(boolean acquired) {
		Waiter registered;
		Attempt current;
		synchronized (this.acquisition) {
			registered = this.waiter;
			this.waiter = null;
			current = this.acquisition.attempt();
		}
		if (registered != null) {
			registered.tryLeave();
			if (!acquired && current != null && registered.handOverUnanswered()) {
				current.unanswered = true; // a holder's hand-over to this owner may yet run in Redis
			}
			// a reader that got in tells the others of this process that they may enter too
			this.engine.subscriber().unregister(registered, acquired, this.kind.admitsOthers());
		}
	}

	/**
	 * The acquisition ended without a lease: the waiter leaves, and an owner id that may hold something in Redis goes
	 * to the reconciler ({@code unanswered}: if a call of it went unanswered; else its reply, on its way, decides), as
	 * does one a holder granted the lease before the end; a grant or revert still to come wakes it, and settles then.
	 */
	void ended(@Nullable Attempt current, boolean unanswered) {
		unregister(false);
		if (unanswered && current != null && current.unanswered) {
			discard(current);
		}
		settled(true);
	}

	/** A lease of the owner id goes to the caller: the owner id is never discarded. */
	synchronized void leased() {
		this.leased = true;
	}

	/** Hand the owner id to the reconciler, once, unless a lease of it went to the caller. */
	void discard(Attempt attempt) {
		synchronized (this) {
			if (this.leased || this.discarded) {
				return;
			}
			this.discarded = true;
		}
		attempt.discardWith(this.engine.reconciler(), this.request.key(), false);
	}

	/**
	 * A wake-up from a release (under its channel's monitor), a confirmation, or a holder's grant or revert (on the
	 * holder's thread): the next step runs on the engine's threads, a granted lease on the call pool, where replies
	 * are applied and the caller's future completes, anything else on the scheduler, which makes the next attempt.
	 */
	void wakeSoon() {
		Waiter registered = this.joined;
		try {
			if (registered != null && registered.granted()) {
				this.engine.calls().execute(() -> settled(false));
			}
			else {
				this.engine.timers().execute(this.acquisition::wake);
			}
		}
		catch (RejectedExecutionException ex) {
			// the service is closing: the deadline ends the wait (a granted lease: its ttl, as any of a closed service)
		}
	}

	/**
	 * Settle a hand-over to the acquisition's owner id, if one is to be settled: a granted lease is taken if the
	 * acquisition can still end with it, on the call pool ({@code hop}: sent there from this thread), else discarded;
	 * once the acquisition has ended, an owner id that a holder's unanswered hand-over may yet give the lease is
	 * discarded. Returns true when the acquisition took the lease or has ended (nothing else is to be done).
	 */
	boolean settled(boolean hop) {
		Waiter registered = this.joined;
		Attempt attempt;
		synchronized (this.acquisition) {
			attempt = this.acquisition.attempt();
		}
		if (registered == null || attempt == null) {
			return false;
		}
		synchronized (this) {
			if (this.leased || this.discarded) {
				return true;
			}
		}
		if (registered.granted()) {
			if (!this.acquisition.claimLease()) {
				discard(attempt); // granted after the acquisition ended: nobody takes it
			}
			else if (!hop || !this.engine.call(() -> null, (none, ex) -> this.acquisition.take(attempt, registered))) {
				this.acquisition.take(attempt, registered); // on the pool already, or the service closed
			}
			return true;
		}
		if (!this.acquisition.ended()) {
			return false;
		}
		// reverted (or never reserved): leaving now succeeds, and a hand-over still reserved wakes it again
		if (registered.tryLeave() && registered.handOverUnanswered()) {
			attempt.unanswered = true; // the holder's hand-over may yet run in Redis
			discard(attempt);
		}
		return true;
	}

}
