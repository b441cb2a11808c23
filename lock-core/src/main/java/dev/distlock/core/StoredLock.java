package dev.distlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * A lock as the store holds it, whichever process holds it: what a {@link LockDirectory} lists. Like
 * {@link LockHolder}, it carries no owner id.
 *
 * @param key the lock key as callers give it
 * @param mode {@link LockMode#READ} or {@link LockMode#WRITE} for a read-write lock; {@link LockMode#FAIR} for a fair
 * lock with waiters queued; {@link LockMode#EXCLUSIVE} otherwise (a fair lock nobody waits for is stored as an
 * exclusive lease is, and listed as one)
 * @param holds the open holds of all its holders (re-entries count; the readers of a read lock add up), at least 1
 * @param remainingTtl how long the store keeps the lease unless it is renewed, extended or released
 * @param fencingToken the lease's fencing token (on a quorum of nodes: the greatest one a node holds)
 * @param holder who holds it, in words an operator can act on, when the store has it; {@code null} otherwise
 * @param queueLength for a fair lock, the waiters queued (of all processes); -1 for other modes
 * @param waitingInstances how many processes have noted in the lease that they wait for it (a lock that is not fair);
 * 0 when none did, -1 for a fair lock (see {@code queueLength})
 * @param nodes on how many of the store's nodes the lease was found: 1 on a single Redis, a Sentinel or a Cluster
 * (one master holds the key); on a quorum of nodes (Redlock) the nodes that hold it
 * @since 0.9.0
 */
public record StoredLock(String key, LockMode mode, int holds, Duration remainingTtl, long fencingToken,
		@Nullable String holder, long queueLength, int waitingInstances, int nodes) {

	/**
	 * A lock as the store described it.
	 * @param key the lock key
	 * @param mode its mode
	 * @param holds the open holds, at least 1
	 * @param remainingTtl the lease's remaining time, not negative
	 * @param fencingToken the lease's fencing token
	 * @param holder who holds it, or {@code null}
	 * @param queueLength the fair queue's length, or -1
	 * @param waitingInstances the processes noted as waiting, or -1
	 * @param nodes the nodes holding it, at least 1
	 */
	public StoredLock {
		Assert.hasText(key, "'key' must not be blank");
		Assert.notNull(mode, "'mode' must not be null");
		Assert.isTrue(holds >= 1, "'holds' must be at least 1");
		Assert.isTrue(remainingTtl != null && !remainingTtl.isNegative(), "'remainingTtl' must not be negative");
		Assert.isTrue(nodes >= 1, "'nodes' must be at least 1");
	}

}
