package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.HolderLabel;
import dev.distlock.core.Lease;
import dev.distlock.core.LockException;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LockUnavailableException;

import org.jspecify.annotations.Nullable;

/**
 * One hold of an in-memory lease; re-entries of the same lease share its {@link LeaseEntry}. Every operation is one
 * call to the store under its monitor, and throws what the Redis engine's lease throws in the same case: see
 * {@code RedisLease} and {@code LeaseReleaser}. Thread-safe.
 */
final class InMemoryLease implements Lease {

	private final LeaseEntry entry;

	private final InMemoryLockStore store;

	private final Duration ttl;

	private final Instant acquiredAt;

	/** Whether this hold was released (guarded by the store's monitor). */
	private boolean released;

	InMemoryLease(LeaseEntry entry, Duration ttl, Instant acquiredAt) {
		this.entry = entry;
		this.store = entry.instance.store;
		this.ttl = ttl;
		this.acquiredAt = acquiredAt;
	}

	@Override
	public String key() {
		return this.entry.key;
	}

	@Override
	public String name() {
		return this.entry.name;
	}

	@Override
	public String owner() {
		return this.entry.owner;
	}

	@Override
	public HolderLabel holder() {
		return this.entry.holder;
	}

	@Override
	public long fencingToken() {
		return this.entry.token;
	}

	@Override
	public Duration ttl() {
		return this.ttl;
	}

	@Override
	public boolean isAutoRenewed() {
		return this.store.call((effects) -> this.entry.autoRenew);
	}

	@Override
	public boolean isHeld() {
		return this.store.call((effects) -> !this.released && this.entry.isHeld(this.store.clock().now()));
	}

	@Override
	public boolean isLost() {
		return this.store.call((effects) -> this.entry.state == LeaseEntry.State.LOST);
	}

	/**
	 * {@inheritDoc} A call to the store: it counts for {@link InMemoryLockStore#failNextCalls(int)}. An expired fixed
	 * lease is not owned, and, as with the Redis engine, that is only announced as a loss when its holder releases it.
	 */
	@Override
	public boolean isOwned() {
		return this.store.call((effects) -> {
			if (this.released || this.entry.lostEvent != null || this.entry.state != LeaseEntry.State.HELD) {
				return false;
			}
			Outage.Call call = this.store.outage.call();
			if (call != Outage.Call.ANSWERED) {
				throw Outage.failure(key(), "check the ownership of", call, "");
			}
			Instant now = this.store.clock().now();
			if (this.entry.hold.gone) {
				this.entry.instance.lostOnHolderCheck(this.entry, now, effects);
				return false;
			}
			if (this.entry.hold.deadline.isAfter(this.entry.validUntil)) {
				this.entry.validUntil = this.entry.hold.deadline;
			}
			return true;
		});
	}

	@Override
	public Instant validUntil() {
		return this.store.call((effects) -> {
			Instant now = this.store.clock().now();
			if (this.released || this.entry.state != LeaseEntry.State.HELD || !this.entry.validUntil.isAfter(now)) {
				return now;
			}
			return this.entry.validUntil;
		});
	}

	@Override
	public void extend(Duration time, ExtendMode mode) {
		if (mode == null) {
			throw new IllegalArgumentException("Extend mode must not be null for lock '" + key() + "'");
		}
		String rule = LockSettings.ttlRule(time);
		if (rule != null) {
			throw new IllegalArgumentException(((mode == ExtendMode.ADD) ? "Lease extension" : "Replacement lease time")
					+ " " + rule + ", but was " + time + " for lock '" + key() + "'");
		}
		change((mode == ExtendMode.ADD) ? "extend" : "renew", (now) -> {
			StoreHold hold = this.entry.hold;
			if (mode == ExtendMode.ADD) {
				Instant added = Instants.plus(hold.deadline, time);
				Instant cap = Instants.plus(now, LockSettings.MAX_TTL);
				hold.deadline = added.isAfter(cap) ? cap : added;
			}
			else {
				hold.deadline = Instants.plus(now, time);
				this.entry.ttl = time;
				this.entry.nextRenewal = Instants.plus(now, this.entry.instance.renewalInterval(time));
			}
			this.entry.validUntil = hold.deadline;
		}, "extend");
	}

	/** {@inheritDoc} The remaining time becomes this hold's own lease time, as with the Redis engine. */
	@Override
	public void renew() {
		change("renew", (now) -> {
			this.entry.hold.deadline = Instants.plus(now, this.ttl);
			this.entry.validUntil = this.entry.hold.deadline;
		}, "renew");
	}

	/** An extension or renewal of the store's deadline, named {@code action} in failures. */
	private void change(String action, Consumer<Instant> apply, String operation) {
		this.store.call((effects) -> {
			if (this.released) {
				throw new LockNotOwnedException(key(), owner(),
						"Cannot " + operation + " lock '" + key() + "': this lease was already released");
			}
			LockLostEvent lost = this.entry.lostEvent;
			if (lost != null) {
				throw new LockLostException(lost);
			}
			Outage.Call call = this.store.outage.call();
			if (call != Outage.Call.ANSWERED) {
				throw Outage.failure(key(), action, call, "");
			}
			Instant now = this.store.clock().now();
			if (this.entry.hold.gone) {
				throw new LockLostException(this.entry.instance.lostOnHolderCheck(this.entry, now, effects));
			}
			apply.accept(now);
			return null;
		});
	}

	@Override
	public void release() {
		this.store.call((effects) -> {
			if (this.released) {
				throw new LockNotOwnedException(key(), owner(),
						"Cannot release lock '" + key() + "': this lease was already released");
			}
			releaseHeld(effects);
			return null;
		});
	}

	@Override
	public void close() {
		this.store.call((effects) -> {
			if (!this.released) {
				releaseHeld(effects);
			}
			return null;
		});
	}

	/**
	 * Release this hold (the store's monitor is held); it counts as released whatever happens. Throws as the Redis
	 * engine's release does: {@link LockLostException} when the lease was gone (or known lost),
	 * {@link LockUnavailableException} when the store did not answer, the lease then expiring at its deadline.
	 */
	private void releaseHeld(Effects effects) {
		this.released = true;
		this.entry.dropLostActions(this);
		Instance instance = this.entry.instance;
		Instant now = this.store.clock().now();
		Duration held = Duration.between(this.acquiredAt, now);
		StoreHold hold = this.entry.hold;
		Outage.Call call = this.store.outage.call();
		if (call != Outage.Call.ANSWERED) {
			if (this.entry.releaseHold()) {
				instance.forget(this.entry);
				hold.renewer = null; // nobody renews it now: it expires at its deadline
			}
			released(effects, now, held, false, "not answered");
			LockLostEvent lost = this.entry.lostEvent;
			LockUnavailableException failure = Outage.failure(key(), "release", call,
					"; the lease expires within " + hold.remaining(now).toMillis() + "ms");
			if (lost != null) {
				LockException lostFailure = new LockLostException(lost);
				lostFailure.addSuppressed(failure);
				throw lostFailure;
			}
			throw failure;
		}
		if (hold.gone) {
			LockLostEvent event = instance.lostOnHolderCheck(this.entry, now, effects);
			if (this.entry.releaseHold()) {
				instance.forget(this.entry);
			}
			released(effects, now, held, false, "not owned");
			throw new LockLostException(event);
		}
		if (this.entry.releaseHold()) {
			this.store.table.drop(hold);
			instance.forget(this.entry);
			this.store.handOn(key(), now, effects);
		}
		else {
			hold.count = Math.max(1, hold.count - 1);
		}
		released(effects, now, held, true, null);
		LockLostEvent lost = this.entry.lostEvent;
		if (lost != null) {
			throw new LockLostException(lost);
		}
	}

	private void released(Effects effects, Instant now, Duration held, boolean wasOwned, @Nullable String detail) {
		Instance instance = this.entry.instance;
		this.store.history.record(now, key(), LockHistory.Kind.RELEASED, instance.clientId, owner(), this.entry.mode,
				fencingToken(), held, detail);
		effects.add(() -> instance.listeners.forEach((listener) -> listener.released(this, held, wasOwned)));
	}

	/**
	 * {@inheritDoc} The action runs on the store's event thread when the loss is found, or on the calling thread when
	 * it was found already; never once this hold is released.
	 */
	@Override
	public void onLost(Consumer<LockLostEvent> action) {
		if (action == null) {
			throw new IllegalArgumentException("The lost-lease action of lock '" + key() + "' must not be null");
		}
		LockLostEvent lost = this.store.call((effects) -> {
			if (this.released || this.entry.addLostAction(this, action)) {
				return null;
			}
			return this.entry.lostEvent;
		});
		if (lost != null) {
			CallbackThreads.runLogged(() -> action.accept(lost), "a lost-lease action of lock '" + key() + "'");
		}
	}

	@Override
	public String toString() {
		return "Lease[key=" + key() + ", holder=" + holder() + ", token=" + fencingToken() + ", in memory]";
	}

}
