package dev.distlock.redis;

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

/** One hold of a Redlock lease; re-entries of the same lease share its {@link RedlockEntry}. */
final class RedlockLease implements Lease {

	final RedlockEntry entry;

	final long acquiredAtNanos = System.nanoTime();

	private final RedlockReleaser releaser;

	private final Duration ttl;

	private final boolean autoRenew;

	private final AtomicBoolean released = new AtomicBoolean();

	RedlockLease(RedlockEntry entry, RedlockReleaser releaser, Duration ttl, boolean autoRenew) {
		this.entry = entry;
		this.releaser = releaser;
		this.ttl = ttl;
		this.autoRenew = autoRenew;
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

	/** {@inheritDoc} On Redlock: the greatest of the tokens the nodes that granted the lease issued. */
	@Override
	public long fencingToken() {
		return this.entry.fencingToken;
	}

	@Override
	public Duration ttl() {
		return this.ttl;
	}

	@Override
	public boolean isAutoRenewed() {
		return this.autoRenew || this.entry.autoRenew();
	}

	@Override
	public boolean isHeld() {
		return !this.released.get() && this.entry.isHeld(System.nanoTime());
	}

	@Override
	public boolean isLost() {
		return this.entry.state() == RedlockEntry.State.LOST;
	}

	@Override
	public boolean isOwned() {
		return !this.released.get() && this.releaser.isOwned(this.entry);
	}

	@Override
	public Instant validUntil() {
		long left = (this.released.get() || this.entry.state() != RedlockEntry.State.HELD) ? 0
				: Math.max(0, this.entry.validUntilNanos() - System.nanoTime());
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
		this.releaser.extend(this.entry, time.toMillis(), mode);
	}

	@Override
	public void renew() {
		checkNotReleased("renew");
		this.releaser.extend(this.entry, this.ttl.toMillis(), null);
	}

	@Override
	public void release() {
		if (!this.released.compareAndSet(false, true)) {
			throw new LockNotOwnedException(key(), owner(),
					"Cannot release lock '" + key() + "': this lease was already released");
		}
		this.entry.lostActions.drop(this);
		this.releaser.release(this);
	}

	@Override
	public void close() {
		if (this.released.compareAndSet(false, true)) {
			this.entry.lostActions.drop(this);
			this.releaser.release(this);
		}
	}

	/**
	 * {@inheritDoc} The entry keeps the action until the registry announces the loss, which runs it on the engine's
	 * events thread; this hold's release drops it.
	 */
	@Override
	public void onLost(Consumer<LockLostEvent> action) {
		this.entry.lostActions.register(this, this.released, key(), action);
	}

	private void checkNotReleased(String operation) {
		if (this.released.get()) {
			throw new LockNotOwnedException(key(), owner(),
					"Cannot " + operation + " lock '" + key() + "': this lease was already released");
		}
	}

	@Override
	public String toString() {
		// the holder's label, never the owner id: a release presents that to the nodes
		return "RedlockLease[key=" + LogSafe.escape(key()) + ", holder=" + holder() + ", token=" + fencingToken()
				+ ", held=" + isHeld() + "]";
	}

}
