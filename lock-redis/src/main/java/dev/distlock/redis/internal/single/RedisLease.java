package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.distlock.core.ExtendMode;
import dev.distlock.redis.internal.lease.EngineLease;

import org.jspecify.annotations.Nullable;

/** One hold of a Redis lease; re-entries of the same lease share its {@link LeaseEntry}. */
public final class RedisLease extends EngineLease<LeaseEntry> {

	private final LeaseReleaser releaser;

	RedisLease(LeaseReleaser releaser, LeaseEntry entry, Duration ttl, long acquiredAtNanos) {
		super(entry, ttl, acquiredAtNanos);
		this.releaser = releaser;
	}

	@Override
	public boolean isOwnedInStore() {
		return this.releaser.isOwned(this);
	}

	@Override
	public void extendBy(long millis, @Nullable ExtendMode mode) {
		this.releaser.extend(this, millis, mode == ExtendMode.ADD, mode == ExtendMode.REPLACE);
	}

	@Override
	public void releaseHold() {
		this.releaser.release(this);
	}

	@Override
	public String kind() {
		return "Lease";
	}

	/**
	 * {@inheritDoc} The release runs on the engine's bounded release executor, never on the caller's thread (unless the
	 * service was closed); the hold counts as released at once, as with {@link #release()}.
	 */
	@Override
	public CompletableFuture<Void> releaseAsync() {
		if (!markReleased()) {
			return CompletableFuture.failedFuture(alreadyReleased("release"));
		}
		return this.releaser.releaseAsync(this);
	}

}
