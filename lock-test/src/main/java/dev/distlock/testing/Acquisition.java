package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import dev.distlock.core.Lease;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;

import org.jspecify.annotations.Nullable;

/**
 * How an instance acquires: one attempt under the store's monitor (a re-entry, a new hold, or a place in the key's
 * queue of waiters), then, for a caller that may wait, a wait for the store's hand-over or the deadline: a blocked
 * thread on the store's monitor, an asynchronous caller on its future, with no thread. The outcomes and their
 * exceptions are the Redis engine's ({@code LeaseAcquirer}, {@code AsyncAcquisition}).
 */
final class Acquisition {

	private final Instance instance;

	private final InMemoryLockStore store;

	Acquisition(Instance instance) {
		this.instance = instance;
		this.store = instance.store;
	}

	/** {@link dev.distlock.core.LockService#tryAcquire(LockRequest)} for the current owner. */
	Optional<Lease> tryAcquire(LockRequest request) {
		LockOwner owner = LockOwner.current();
		String thread = Thread.currentThread().getName();
		Instant[] start = new Instant[1];
		for (;;) {
			Outcome outcome = this.store.call((effects) -> {
				if (start[0] == null) {
					start[0] = this.store.clock().now();
				}
				return attempt(request, owner, thread, start[0], null, true, effects);
			});
			if (outcome.lease != null) {
				return Optional.of(outcome.lease);
			}
			if (outcome.waiter != null) {
				return awaitGrant(outcome.waiter);
			}
			if (!outcome.retryWhenReachable) {
				return Optional.empty();
			}
			awaitReachable(request, start[0]);
		}
	}

	/** {@link dev.distlock.core.AsyncLockService#tryAcquireAsync}: no thread waits; the store completes the future. */
	CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner) {
		CompletableFuture<Optional<Lease>> future = new CompletableFuture<>();
		String ownerThread = owner.isThread() ? Thread.currentThread().getName() : owner.toString();
		Outcome outcome;
		try {
			outcome = this.store.call((effects) -> attempt(request, owner, ownerThread, this.store.clock().now(), future,
					false, effects));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		Waiter waiter = outcome.waiter;
		if (waiter != null) {
			// cancelling the future abandons the wait; a lease granted meanwhile is released by its completion
			future.whenComplete((result, failure) -> {
				if (future.isCancelled()) {
					this.store.call((effects) -> {
						abandon(waiter, LockHistory.Kind.CANCELLED, effects);
						return null;
					});
				}
			});
			return future;
		}
		return CompletableFuture.completedFuture(Optional.ofNullable(outcome.lease));
	}

	/**
	 * One attempt (the monitor is held): re-enter the owner's lease, hold the key if it admits a new holder, else
	 * (unless the wait is zero) queue a waiter; a request for another number of permits than the holders' is refused. A call the store does not answer is retried at once when it was one of
	 * those the test made fail, and otherwise ends the attempt as the Redis engine's would: at once for a wait of zero
	 * (and for an asynchronous re-entry), else when the wait ends, unless the store answers again before.
	 */
	private Outcome attempt(LockRequest request, LockOwner owner, String ownerThread, Instant start,
			@Nullable CompletableFuture<Optional<Lease>> future, boolean blocking, Effects effects) {
		boolean mayWait = !request.waitTime().isZero();
		Instant deadline = Instants.plus(start, request.waitTime());
		for (;;) {
			Instant now = this.store.clock().now();
			LeaseEntry held = this.instance.heldBy(request.key(), owner, request.mode());
			if (held != null) {
				Outage.Call call = this.store.outage.call();
				if (call == Outage.Call.FAILED_ONCE && mayWait && now.isBefore(deadline)) {
					continue;
				}
				if (call == Outage.Call.UNREACHABLE && mayWait && blocking && now.isBefore(deadline)) {
					return Outcome.RETRY_WHEN_REACHABLE;
				}
				if (call != Outage.Call.ANSWERED) {
					throw failed(request, start, now, mayWait, call, effects);
				}
				if (!held.hold.gone) {
					return Outcome.of(reenter(held, request, start, now, effects));
				}
				this.instance.lostOnHolderCheck(held, now, effects); // gone: a new acquisition follows
			}
			Outage.Call call = this.store.outage.call();
			if (call == Outage.Call.FAILED_ONCE && mayWait && now.isBefore(deadline)) {
				continue;
			}
			if (call != Outage.Call.ANSWERED && !(call == Outage.Call.UNREACHABLE && mayWait && now.isBefore(deadline))) {
				throw failed(request, start, now, mayWait, call, effects);
			}
			String ownerId = this.instance.newOwnerId(owner);
			KeyState keyState = this.store.table.keyState(request.key());
			StoreHold downgradeOf = this.instance.downgradeOf(request.key(), owner, request.mode());
			int otherPermits = (call == Outage.Call.ANSWERED) ? keyState.otherPermits(request.mode(), request.permits())
					: 0;
			if (otherPermits > 0) { // the store's answer is final: neither waited for nor retried
				this.store.table.forgetIfIdle(keyState);
				IllegalStateException refused = KeyState.refusedPermits(request.key(), request.permits(), otherPermits);
				this.store.history.record(now, request.key(), LockHistory.Kind.FAILED, this.instance.clientId, null,
						request.mode(), 0, Duration.between(start, now), refused.getMessage());
				throw refused;
			}
			if (call == Outage.Call.ANSWERED
					&& keyState.admits(request.mode(), request.permits(), downgradeOf, now, null)) {
				StoreHold hold = this.store.table.hold(keyState, ownerId, this.instance.clientId, request.mode(),
						request.permits(), request.ttl(), now);
				LeaseEntry entry = this.instance.newEntry(request, owner, ownerThread, hold, now,
						Duration.between(start, now));
				return Outcome.of(acquired(request, entry, start, now, effects));
			}
			if (!mayWait) {
				this.store.table.forgetIfIdle(keyState);
				this.store.history.record(now, request.key(), LockHistory.Kind.NOT_ACQUIRED, this.instance.clientId,
						null, request.mode(), 0, Duration.ZERO, null);
				effects.add(() -> this.instance.listeners.forEach(
						(listener) -> listener.notAcquired(request, Duration.between(start, now), null)));
				return Outcome.EMPTY;
			}
			Waiter waiter = new Waiter(this.instance, request, owner, ownerId, ownerThread, start, deadline, future);
			keyState.waiters.add(waiter);
			this.instance.startedWaiting(waiter, now);
			return new Outcome(null, waiter, false);
		}
	}

	private InMemoryLease reenter(LeaseEntry held, LockRequest request, Instant start, Instant now, Effects effects) {
		held.holds++;
		held.hold.count++;
		if (request.ttl().compareTo(held.ttl) > 0) {
			held.ttl = request.ttl();
		}
		if (request.autoRenew() && !held.autoRenew) {
			held.autoRenew = true;
			held.nextRenewal = Instants.plus(now, this.instance.renewalInterval(held.ttl));
		}
		Instant until = Instants.plus(now, request.ttl());
		if (until.isAfter(held.hold.deadline)) {
			held.hold.deadline = until;
		}
		if (until.isAfter(held.validUntil)) {
			held.validUntil = until;
		}
		this.store.history.record(now, held.key, LockHistory.Kind.REENTERED, this.instance.clientId, held.owner,
				held.mode, held.token, Duration.between(start, now), null);
		return acquired(request, held, start, now, effects);
	}

	private InMemoryLease acquired(LockRequest request, LeaseEntry entry, Instant start, Instant now, Effects effects) {
		InMemoryLease lease = new InMemoryLease(entry, request.ttl(), now);
		Duration waited = Duration.between(start, now);
		effects.add(() -> this.instance.listeners.forEach((listener) -> listener.acquired(request, lease, waited)));
		return lease;
	}

	private LockUnavailableException failed(LockRequest request, Instant start, Instant now, boolean mayWait,
			Outage.Call call, Effects effects) {
		LockUnavailableException failure = mayWait ? Outage.unansweredWithin(request.key(), request.waitTime(), call)
				: Outage.failure(request.key(), "acquire", call, "");
		this.store.history.record(now, request.key(), LockHistory.Kind.FAILED, this.instance.clientId, null,
				request.mode(), 0, Duration.between(start, now), failure.getMessage());
		effects.add(() -> this.instance.listeners.forEach(
				(listener) -> listener.notAcquired(request, Duration.between(start, now), failure)));
		return failure;
	}

	/** Wait on the store's monitor for the waiter's end; an interrupt abandons the wait (a lease granted meanwhile is released). */
	private Optional<Lease> awaitGrant(Waiter waiter) {
		boolean[] interrupted = new boolean[1];
		for (;;) {
			Waiter.State state = this.store.call((effects) -> {
				if (waiter.isWaiting() && effects.isQuiet()) {
					try {
						this.store.await(waiter.deadline);
					}
					catch (InterruptedException ex) {
						interrupted[0] = true;
						abandon(waiter, LockHistory.Kind.INTERRUPTED, effects);
					}
				}
				return waiter.state;
			});
			if (interrupted[0]) {
				throw interrupted(waiter);
			}
			if (state != Waiter.State.WAITING) {
				return ended(waiter);
			}
		}
	}

	private Optional<Lease> ended(Waiter waiter) {
		LockRequest request = waiter.request;
		LeaseEntry entry = waiter.granted;
		Instant grantedAt = waiter.grantedAt;
		if (waiter.state == Waiter.State.GRANTED && entry != null && grantedAt != null) {
			InMemoryLease lease = new InMemoryLease(entry, request.ttl(), grantedAt);
			Duration waited = waiter.waited(grantedAt);
			this.instance.listeners.forEach((listener) -> listener.acquired(request, lease, waited));
			return Optional.of(lease);
		}
		Duration waited = waiter.waited(this.store.clock().now());
		RuntimeException failure = waiter.failure;
		this.instance.listeners.forEach((listener) -> listener.notAcquired(request, waited, failure));
		if (failure != null) {
			throw failure;
		}
		return Optional.empty();
	}

	/** The thread was interrupted while waiting: what the store granted it meanwhile is given back. */
	private LockInterruptedException interrupted(Waiter waiter) {
		LockInterruptedException failure = new LockInterruptedException(waiter.key(),
				new InterruptedException("Interrupted while waiting for lock '" + waiter.key() + "'"));
		Thread.currentThread().interrupt();
		LeaseEntry granted = waiter.granted;
		Instant grantedAt = waiter.grantedAt;
		if (waiter.state == Waiter.State.GRANTED && granted != null && grantedAt != null) {
			try {
				new InMemoryLease(granted, waiter.request.ttl(), grantedAt).close();
			}
			catch (RuntimeException ex) {
				failure.addSuppressed(ex);
			}
		}
		Duration waited = waiter.waited(this.store.clock().now());
		this.instance.listeners.forEach((listener) -> listener.notAcquired(waiter.request, waited, failure));
		return failure;
	}

	/** A blocked re-entry the store did not answer: wait until it answers again or the wait ends. */
	private void awaitReachable(LockRequest request, Instant start) {
		Instant deadline = Instants.plus(start, request.waitTime());
		boolean[] interrupted = new boolean[1];
		boolean waiting = true;
		while (waiting && !interrupted[0]) {
			waiting = this.store.call((effects) -> {
				if (this.store.outage.isReachable() || !this.store.clock().now().isBefore(deadline)) {
					return false;
				}
				if (effects.isQuiet()) {
					try {
						this.store.await(deadline);
					}
					catch (InterruptedException ex) {
						interrupted[0] = true;
					}
				}
				return true;
			});
		}
		if (interrupted[0]) {
			Thread.currentThread().interrupt();
			LockInterruptedException failure = new LockInterruptedException(request.key(),
					new InterruptedException("Interrupted while waiting for lock '" + request.key() + "'"));
			Duration waited = Duration.between(start, this.store.clock().now());
			this.instance.listeners.forEach((listener) -> listener.notAcquired(request, waited, failure));
			throw failure;
		}
	}

	/** End a waiter's wait at its caller's request (an interrupt, a cancel), unless it ended already. */
	private void abandon(Waiter waiter, LockHistory.Kind kind, Effects effects) {
		if (!waiter.isWaiting()) {
			return;
		}
		Instant now = this.store.clock().now();
		KeyState keyState = this.store.table.keyState(waiter.key());
		keyState.waiters.remove(waiter);
		waiter.state = Waiter.State.ABANDONED;
		this.instance.waitEnded(waiter, effects);
		this.store.history.record(now, waiter.key(), kind, this.instance.clientId, waiter.ownerId, waiter.mode(), 0,
				waiter.waited(now), null);
		// a writer that stopped waiting no longer keeps readers out
		this.store.handOn(waiter.key(), now, effects);
	}

	/** Complete an asynchronous acquisition whose wait ended (on a callback thread). */
	static void completeAsync(Waiter waiter) {
		CompletableFuture<Optional<Lease>> future = waiter.future;
		if (future == null) {
			return;
		}
		Instance instance = waiter.instance;
		LockRequest request = waiter.request;
		LeaseEntry entry = waiter.granted;
		Instant grantedAt = waiter.grantedAt;
		if (waiter.state == Waiter.State.GRANTED && entry != null && grantedAt != null) {
			InMemoryLease lease = new InMemoryLease(entry, request.ttl(), grantedAt);
			Duration waited = waiter.waited(grantedAt);
			instance.listeners.forEach((listener) -> listener.acquired(request, lease, waited));
			if (!future.complete(Optional.of(lease))) {
				// cancelled since: nobody will release it
				CallbackThreads.runLogged(lease::close, "the release of a lease granted to a cancelled acquisition");
			}
			return;
		}
		Duration waited = waiter.waited(instance.store.clock().now());
		RuntimeException failure = waiter.failure;
		instance.listeners.forEach((listener) -> listener.notAcquired(request, waited, failure));
		if (failure != null) {
			future.completeExceptionally(failure);
		}
		else {
			future.complete(Optional.empty());
		}
	}

	/** What one attempt came to. */
	private record Outcome(@Nullable InMemoryLease lease, @Nullable Waiter waiter, boolean retryWhenReachable) {

		static final Outcome EMPTY = new Outcome(null, null, false);

		static final Outcome RETRY_WHEN_REACHABLE = new Outcome(null, null, true);

		static Outcome of(InMemoryLease lease) {
			return new Outcome(lease, null, false);
		}

	}

}
