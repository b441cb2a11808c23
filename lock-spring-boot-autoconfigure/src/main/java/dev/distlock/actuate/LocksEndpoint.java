package dev.distlock.actuate;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.redis.RedisLockService;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.util.Assert;

/**
 * The {@code locks} endpoint: the leases this instance holds now, oldest first, with what an operator needs to find a
 * stuck holder (its thread, since when, the last renewal) and to reason about fencing. Read-only; see
 * {@link ForceReleaseLocksEndpoint} for the opt-in write operation.
 *
 * @since 0.1.0
 */
@Endpoint(id = "locks")
public class LocksEndpoint {

	private final RedisLockService lockService;

	/**
	 * An endpoint over the given service's leases.
	 * @param lockService the service whose leases are listed
	 */
	public LocksEndpoint(RedisLockService lockService) {
		Assert.notNull(lockService, "'lockService' must not be null");
		this.lockService = lockService;
	}

	/**
	 * The leases this instance holds now, and lost ones whose holders have not released them yet.
	 * @return the instance's client id, its waiting threads and its leases, oldest first
	 */
	@ReadOperation
	public LocksDescriptor locks() {
		List<LeaseDescriptor> leases = this.lockService.activeLeases().stream()
			.sorted(Comparator.comparing(LeaseSnapshot::heldSince).thenComparing(LeaseSnapshot::key))
			.map(LeaseDescriptor::of)
			.toList();
		return new LocksDescriptor(this.lockService.clientId(), this.lockService.waitingThreads(), leases);
	}

	/** {@return the service whose leases this endpoint shows} */
	protected final RedisLockService getLockService() {
		return this.lockService;
	}

	/**
	 * What this instance holds.
	 *
	 * @param clientId the instance's client id: the prefix of the owner id of each lease it holds
	 * @param waitingThreads threads of this instance waiting for a lock held elsewhere
	 * @param leases the leases it holds (and lost ones not yet released), oldest first
	 */
	public record LocksDescriptor(String clientId, int waitingThreads, List<LeaseDescriptor> leases) {
	}

	/**
	 * One lease this instance holds, or lost while its holder has not released it yet.
	 *
	 * @param key the lock key
	 * @param name the lock's name (the annotation's name, or the method)
	 * @param owner the owner id stored in Redis: client id and thread id
	 * @param ownerThread the name of the thread that acquired it
	 * @param heldSince when it was acquired
	 * @param holdCount open holds (re-entries)
	 * @param ttlMillis the lease time
	 * @param ttlRemainingMillis the lease time left as this instance last confirmed it with Redis; 0 once lost
	 * @param lastRenewal when the watchdog last renewed it, {@code null} if not yet
	 * @param fencingToken the lease's fencing token
	 * @param autoRenewed whether the watchdog renews it
	 * @param lost whether it was found lost (its holder has not released it yet; it is listed until then)
	 */
	public record LeaseDescriptor(String key, String name, String owner, String ownerThread, Instant heldSince,
			int holdCount, long ttlMillis, long ttlRemainingMillis, @Nullable Instant lastRenewal, long fencingToken,
			boolean autoRenewed, boolean lost) {

		static LeaseDescriptor of(LeaseSnapshot lease) {
			return new LeaseDescriptor(lease.key(), lease.name(), lease.owner(), lease.ownerThread(), lease.heldSince(),
					lease.holdCount(), lease.ttl().toMillis(), lease.ttlRemaining().toMillis(), lease.lastRenewal(),
					lease.fencingToken(), lease.autoRenewed(), lease.lost());
		}

	}

}
