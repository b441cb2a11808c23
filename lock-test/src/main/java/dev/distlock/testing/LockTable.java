package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.distlock.core.LockMode;

import org.jspecify.annotations.Nullable;

/**
 * The store's keys: who holds each, who waits for it, and the fencing tokens. What Redis and the Redis engine's
 * scripts are to the Redis engine: admissions, hand-overs to waiters, expiries and the ends of waits, each atomic
 * (the caller holds the store's monitor for every method). It calls the instances back only to create the lease of a
 * waiter it admits and to tell a holder's instance that a lease expired.
 * <p>
 * Invariants: a key is in {@code keys} while it has a holder or a waiter; the token counter only grows, whatever
 * expires or is released, so a key's tokens grow with every new holder; a waiter that the key admits when it changes
 * is granted it at once (a release, an expiry, a forced release or the end of another wait hands it over), so no
 * waiter waits for a key that would admit it.
 */
final class LockTable {

	private final InMemoryLockStore store;

	private final Map<String, KeyState> keys = new HashMap<>();

	private long lastToken;

	LockTable(InMemoryLockStore store) {
		this.store = store;
	}

	KeyState keyState(String key) {
		return this.keys.computeIfAbsent(key, KeyState::new);
	}

	@Nullable KeyState existing(String key) {
		return this.keys.get(key);
	}

	Collection<KeyState> keys() {
		return this.keys.values();
	}

	void forgetIfIdle(KeyState keyState) {
		if (keyState.isIdle()) {
			this.keys.remove(keyState.key, keyState);
		}
	}

	/**
	 * A new holder of the key, which the caller found admitted: the next token unless it joins readers; the first
	 * holder of a permit of a free key sets its number of {@code permits}.
	 */
	StoreHold hold(KeyState keyState, String owner, String instance, LockMode mode, int permits, Duration ttl,
			Instant now) {
		if (mode == LockMode.PERMITS && keyState.holds.isEmpty()) {
			keyState.permits = permits;
		}
		long token;
		if (mode == LockMode.READ && !keyState.holds.isEmpty()) {
			token = keyState.token;
		}
		else {
			token = ++this.lastToken;
			keyState.token = token;
		}
		StoreHold hold = new StoreHold(keyState.key, owner, instance, mode, token, now, Instants.plus(now, ttl));
		keyState.holds.add(hold);
		return hold;
	}

	/** The hold leaves the store (released, expired, forced or lost); the caller hands the key on. */
	void drop(StoreHold hold) {
		hold.gone = true;
		KeyState keyState = this.keys.get(hold.key);
		if (keyState != null) {
			keyState.holds.remove(hold);
		}
	}

	/**
	 * Hand the key to every waiter it admits at {@code at}, in the order they came (a release of permits lets in as
	 * many as came back); a fair waiter the key does not admit yet keeps the fair waiters behind it waiting. A waiter
	 * for another number of permits than the holders' fails, as the Redis engine's waiter is refused at its next
	 * attempt. Nothing is handed on while the store is unreachable (the waiters' attempts would get no answer);
	 * {@link InMemoryLockStore#makeReachable()} hands on what it held back.
	 */
	void grantWaiting(KeyState keyState, Instant at, Effects effects) {
		if (!this.store.outage.isReachable() || keyState.waiters.isEmpty()) {
			return;
		}
		boolean fairBlocked = false;
		for (Waiter waiter : List.copyOf(keyState.waiters)) {
			if (!waiter.isAliveAt(at)) {
				continue;
			}
			boolean fair = waiter.mode() == LockMode.FAIR;
			if (fair && fairBlocked) {
				continue;
			}
			int held = keyState.otherPermits(waiter.mode(), waiter.request.permits());
			if (held > 0) {
				keyState.waiters.remove(waiter);
				waiter.state = Waiter.State.FAILED;
				waiter.failure = KeyState.refusedPermits(waiter.key(), waiter.request.permits(), held);
				waiter.instance.waitEnded(waiter, effects);
				continue;
			}
			StoreHold downgradeOf = waiter.instance.downgradeOf(waiter.key(), waiter.owner, waiter.mode());
			if (keyState.admits(waiter.mode(), waiter.request.permits(), downgradeOf, at, waiter)) {
				keyState.waiters.remove(waiter);
				StoreHold hold = hold(keyState, waiter.ownerId, waiter.instance.clientId, waiter.mode(),
						waiter.request.permits(), waiter.request.ttl(), at);
				waiter.grant(waiter.instance.newEntry(waiter.request, waiter.owner, waiter.ownerThread, hold, at,
						waiter.waited(at)), at);
				waiter.instance.waitEnded(waiter, effects);
			}
			else if (fair) {
				fairBlocked = true;
			}
		}
	}

	/**
	 * Let expiries and wait deadlines up to {@code now} happen, in the order of their times: at each such time, the
	 * holds whose deadline it is expire first, then the key goes to the waiters it admits (a waiter is still there at
	 * its own deadline, as the Redis engine makes one last attempt then), then the waits whose deadline it is end.
	 * Before each step the watchdogs renew what fell due by {@code now}, leases handed over in an earlier step
	 * included: a renewed lease never expires while the store answers, however far the clock moved.
	 */
	void catchUp(Instant now, Effects effects) {
		for (;;) {
			this.store.renewDue(now, effects);
			Instant at = firstDue(now);
			if (at == null) {
				return;
			}
			Set<KeyState> changed = new LinkedHashSet<>();
			for (KeyState keyState : this.keys.values()) {
				for (StoreHold hold : List.copyOf(keyState.holds)) {
					if (hold.isDue(at)) {
						expire(hold, at, effects);
						changed.add(keyState);
					}
				}
			}
			changed.forEach((keyState) -> grantWaiting(keyState, at, effects));
			for (KeyState keyState : this.keys.values()) {
				for (Waiter waiter : List.copyOf(keyState.waiters)) {
					if (waiter.isWaiting() && !waiter.deadline.isAfter(at)) {
						endWait(keyState, waiter, at, effects);
						changed.add(keyState);
					}
				}
			}
			// a writer that stopped waiting no longer keeps readers out
			changed.forEach((keyState) -> grantWaiting(keyState, at, effects));
			changed.forEach(this::forgetIfIdle);
		}
	}

	/** A wait ended at its deadline: empty-handed, or failed when the store does not answer then. */
	private void endWait(KeyState keyState, Waiter waiter, Instant at, Effects effects) {
		keyState.waiters.remove(waiter);
		if (this.store.outage.isReachable()) {
			waiter.state = Waiter.State.TIMED_OUT;
		}
		else {
			waiter.state = Waiter.State.FAILED;
			waiter.failure = Outage.unansweredWithin(waiter.key(), waiter.request.waitTime(), Outage.Call.UNREACHABLE);
		}
		waiter.instance.waitEnded(waiter, effects);
	}

	/** The hold's time ran out: the store drops it, and its instance hears of it (as the Redis watchdog finds out). */
	private void expire(StoreHold hold, Instant at, Effects effects) {
		drop(hold);
		this.store.history.record(at, hold.key, LockHistory.Kind.EXPIRED, hold.instance, hold.owner, hold.mode,
				hold.token, Duration.between(hold.since, at), null);
		LeaseEntry renewer = hold.renewer;
		if (renewer != null) {
			renewer.instance.holdExpired(renewer, at, effects);
		}
	}

	/** The earliest expiry or wait deadline that is due at {@code now}, or null. */
	private @Nullable Instant firstDue(Instant now) {
		Instant first = null;
		for (KeyState keyState : this.keys.values()) {
			for (StoreHold hold : keyState.holds) {
				if (hold.isDue(now) && (first == null || hold.deadline.isBefore(first))) {
					first = hold.deadline;
				}
			}
			for (Waiter waiter : keyState.waiters) {
				if (waiter.isWaiting() && !waiter.deadline.isAfter(now)
						&& (first == null || waiter.deadline.isBefore(first))) {
					first = waiter.deadline;
				}
			}
		}
		return first;
	}

	/** {@return the earliest expiry or wait deadline to come, or null}; for the timer of a store on the system clock. */
	@Nullable Instant nextDue() {
		Instant next = null;
		for (KeyState keyState : this.keys.values()) {
			for (StoreHold hold : keyState.holds) {
				next = Instants.earlier(next, hold.deadline);
			}
			for (Waiter waiter : keyState.waiters) {
				if (waiter.isWaiting()) {
					next = Instants.earlier(next, waiter.deadline);
				}
			}
		}
		return next;
	}

}
