package dev.distlock.redis.internal.redlock;

import java.time.Duration;

import dev.distlock.core.ExtendMode;
import dev.distlock.redis.internal.lease.EngineLease;

import org.jspecify.annotations.Nullable;

/** One hold of a Redlock lease; re-entries of the same lease share its {@link RedlockEntry}. */
public final class RedlockLease extends EngineLease<RedlockEntry> {

	private final RedlockReleaser releaser;

	private final boolean autoRenew;

	RedlockLease(RedlockEntry entry, RedlockReleaser releaser, Duration ttl, boolean autoRenew) {
		super(entry, ttl, System.nanoTime());
		this.releaser = releaser;
		this.autoRenew = autoRenew;
	}

	/** {@inheritDoc} On Redlock: the greatest of the tokens the nodes that granted the lease issued. */
	@Override
	public long fencingToken() {
		return super.fencingToken();
	}

	@Override
	public boolean isAutoRenewed() {
		return this.autoRenew || super.isAutoRenewed();
	}

	@Override
	public boolean isOwnedInStore() {
		return this.releaser.isOwned(this.entry);
	}

	@Override
	public void extendBy(long millis, @Nullable ExtendMode mode) {
		this.releaser.extend(this.entry, millis, mode);
	}

	@Override
	public void releaseHold() {
		this.releaser.release(this);
	}

	@Override
	public String kind() {
		return "RedlockLease";
	}

}
