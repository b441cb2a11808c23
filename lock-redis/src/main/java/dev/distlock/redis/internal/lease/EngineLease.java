package dev.distlock.redis.internal.lease;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.HolderLabel;
import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.redlock.RedlockLease;
import dev.distlock.redis.internal.single.RedisLease;

import org.jspecify.annotations.Nullable;

/**
 * One hold of a lease on either engine: the handle base of {@link RedisLease} (single node) and {@link RedlockLease}
 * (a quorum of nodes). Re-entries of one lease share its {@link LeaseRecord}; each handle has its own
 * {@code released} flag, so a hold is released once, and what the caller reads of it (held, lost, valid until) comes
 * from the shared record. The subclasses only say how their engine checks, extends and releases a hold.
 * <p>
 * Invariant: {@code released} goes from false to true once, before the engine's release is called and before this
 * hold's lost-lease action is dropped, so a second release, an extension or a renewal after it fails the same way on
 * both engines, and a loss announced after the release never runs this hold's action.
 *
 * @param <E> the engine's record of the lease
 */
public abstract class EngineLease<E extends LeaseRecord> implements Lease {

	public final E entry;

	public final long acquiredAtNanos;

	private final Duration ttl;

	private final AtomicBoolean released = new AtomicBoolean();

	public EngineLease(E entry, Duration ttl, long acquiredAtNanos) {
		this.entry = entry;
		this.ttl = ttl;
		this.acquiredAtNanos = acquiredAtNanos;
	}

	/** Ask the store whether this hold's lease is still this process's. */
	public abstract boolean isOwnedInStore();

	/**
	 * Extend the lease by (or, with {@link ExtendMode#REPLACE}, to) {@code millis}; a {@code null} mode is a manual
	 * renewal to the lease time.
	 */
	public abstract void extendBy(long millis, @Nullable ExtendMode mode);

	/** Release this hold in the store; called once, after {@code released} was set. */
	public abstract void releaseHold();

	/** How {@link #toString()} names the handle. */
	public abstract String kind();

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
		return this.entry.isAutoRenew();
	}

	@Override
	public boolean isHeld() {
		return !this.released.get() && this.entry.isHeld(System.nanoTime());
	}

	@Override
	public boolean isLost() {
		return this.entry.state() == LeaseRecord.State.LOST;
	}

	@Override
	public boolean isOwned() {
		return !this.released.get() && isOwnedInStore();
	}

	@Override
	public Instant validUntil() {
		long now = System.nanoTime();
		long left = (this.released.get() || this.entry.state() != LeaseRecord.State.HELD) ? 0
				: Math.max(0, this.entry.validUntilNanos() - now);
		return Instant.now().plusNanos(left);
	}

	@Override
	public void extend(Duration time, ExtendMode mode) {
		if (mode == null) {
			throw new IllegalArgumentException("Extend mode must not be null for lock '" + LogSafe.escape(key()) + "'");
		}
		String rule = LockSettings.ttlRule(time); // at most a year: beyond it PEXPIRE may overflow
		if (rule != null) {
			throw new IllegalArgumentException(((mode == ExtendMode.ADD) ? "Lease extension" : "Replacement lease time")
					+ " " + rule + ", but was " + time + " for lock '" + LogSafe.escape(key()) + "'");
		}
		checkNotReleased("extend");
		extendBy(time.toMillis(), mode);
	}

	@Override
	public void renew() {
		checkNotReleased("renew");
		extendBy(this.ttl.toMillis(), null);
	}

	@Override
	public void release() {
		if (!markReleased()) {
			throw alreadyReleased("release");
		}
		releaseHold();
	}

	@Override
	public void close() {
		if (markReleased()) {
			releaseHold();
		}
	}

	/**
	 * {@inheritDoc} The record keeps the action until the registry announces the loss, which runs it on the engine's
	 * events thread; this hold's release drops it.
	 */
	@Override
	public void onLost(Consumer<LockLostEvent> action) {
		this.entry.lostActions.register(this, this.released, key(), action);
	}

	/** Count this hold released, once, and drop its lost-lease action; false when it was released before. */
	public final boolean markReleased() {
		if (!this.released.compareAndSet(false, true)) {
			return false;
		}
		this.entry.lostActions.drop(this);
		return true;
	}

	public final LockNotOwnedException alreadyReleased(String operation) {
		return new LockNotOwnedException(key(), owner(),
				"Cannot " + operation + " lock '" + key() + "': this lease was already released");
	}

	private void checkNotReleased(String operation) {
		if (this.released.get()) {
			throw alreadyReleased(operation);
		}
	}

	@Override
	public String toString() {
		// the holder's label, never the owner id: a release presents that to the store
		return kind() + "[key=" + LogSafe.escape(key()) + ", holder=" + holder() + ", token=" + fencingToken()
				+ ", held=" + isHeld() + "]";
	}

}
