package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.core.Lease;
import dev.distlock.core.LockNotOwnedException;

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
	public void extend(Duration extra) {
		if (extra == null || extra.isNegative() || extra.isZero()) {
			throw new IllegalArgumentException("Lease extension must be positive, but was " + extra + " for lock '" + key() + "'");
		}
		checkNotReleased("extend");
		this.releaser.extend(this, extra.toMillis(), true);
	}

	@Override
	public void renew() {
		checkNotReleased("renew");
		this.releaser.extend(this, this.ttl.toMillis(), false);
	}

	@Override
	public void release() {
		if (!this.released.compareAndSet(false, true)) {
			throw new LockNotOwnedException(key(), owner(), "Cannot release lock '" + key() + "': this lease was already released");
		}
		this.releaser.release(this);
	}

	@Override
	public void close() {
		if (this.released.compareAndSet(false, true)) {
			this.releaser.release(this);
		}
	}

	private void checkNotReleased(String operation) {
		if (this.released.get()) {
			throw new LockNotOwnedException(key(), owner(),
					"Cannot " + operation + " lock '" + key() + "': this lease was already released");
		}
	}

	@Override
	public String toString() {
		return "Lease[key=" + key() + ", owner=" + owner() + ", token=" + fencingToken() + ", held=" + isHeld() + "]";
	}

}
