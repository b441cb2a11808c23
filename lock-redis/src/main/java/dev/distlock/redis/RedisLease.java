package dev.distlock.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.HolderLabel;
import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LogSafe;

/** One hold of a Redis lease; re-entries of the same lease share its {@link LeaseEntry}. */
final class RedisLease implements Lease {

	private final LeaseReleaser releaser;

	final LeaseEntry entry;

	private final Duration ttl;

	final long acquiredAtNanos;

	private final AtomicBoolean released = new AtomicBoolean();

	RedisLease(LeaseReleaser releaser, LeaseEntry entry, Duration ttl, long acquiredAtNanos) {
		this.releaser = releaser;
		this.entry = entry;
		this.ttl = ttl;
		this.acquiredAtNanos = acquiredAtNanos;
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
		return this.entry.isAutoRenew();
	}

	@Override
	public boolean isHeld() {
		return !this.released.get() && this.entry.isHeld(System.nanoTime());
	}

	@Override
	public boolean isLost() {
		return this.entry.state() == LeaseEntry.State.LOST;
	}

	@Override
	public boolean isOwned() {
		return !this.released.get() && this.releaser.isOwned(this);
	}

	@Override
	public Instant validUntil() {
		long now = System.nanoTime();
		long left = (this.released.get() || this.entry.state() != LeaseEntry.State.HELD) ? 0
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
		this.releaser.extend(this, time.toMillis(), mode == ExtendMode.ADD, mode == ExtendMode.REPLACE);
	}

	@Override
	public void renew() {
		checkNotReleased("renew");
		this.releaser.extend(this, this.ttl.toMillis(), false, false);
	}

	@Override
	public void release() {
		if (!this.released.compareAndSet(false, true)) {
			throw new LockNotOwnedException(key(), owner(), "Cannot release lock '" + key() + "': this lease was already released");
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

	/**
	 * {@inheritDoc} The release runs on the engine's bounded release executor, never on the caller's thread (unless the
	 * service was closed); the hold counts as released at once, as with {@link #release()}.
	 */
	@Override
	public CompletableFuture<Void> releaseAsync() {
		if (!this.released.compareAndSet(false, true)) {
			return CompletableFuture.failedFuture(new LockNotOwnedException(key(), owner(),
					"Cannot release lock '" + key() + "': this lease was already released"));
		}
		this.entry.lostActions.drop(this);
		return this.releaser.releaseAsync(this);
	}

	private void checkNotReleased(String operation) {
		if (this.released.get()) {
			throw new LockNotOwnedException(key(), owner(),
					"Cannot " + operation + " lock '" + key() + "': this lease was already released");
		}
	}

	@Override
	public String toString() {
		// the holder's label, never the owner id: a release presents that to Redis
		return "Lease[key=" + LogSafe.escape(key()) + ", holder=" + holder() + ", token=" + fencingToken() + ", held="
				+ isHeld() + "]";
	}

}
