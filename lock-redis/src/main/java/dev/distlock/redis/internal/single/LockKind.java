package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * What one kind of lock ({@link LockMode}) does in Redis and in this process, chosen once per request (by the
 * function the service gives {@link LeaseAcquirer}: {@code LockKinds.of}) and carried by its {@link Attempt} and
 * {@link LeaseEntry}: the shared acquisition, holding and release code calls these hooks instead of asking which kind
 * it serves. The kinds themselves live in the package above this engine ({@code internal.kind}): exclusive, fair,
 * read and write are four; a fifth is one more subclass there (and its scripts), with its case in {@code LockKinds}.
 * <p>
 * Kinds are stateless singletons: every hook gets what it works with (the store, the acquirer, the releaser) from its
 * caller, so a kind holds no connection, thread or lease of its own.
 */
public abstract class LockKind {

	/** {@return the mode this kind serves, as leases and snapshots show it} */
	public abstract LockMode mode();

	// ---- before any call to Redis

	/**
	 * Why {@code request} is refused at once, before any call to Redis, or null (see
	 * {@link ReadWriteLocks#refusal}).
	 */
	public @Nullable RuntimeException refusal(LockRequest request, String redisKey, LockOwner owner, LeaseRegistry registry,
			boolean replicaAcks) {
		return null;
	}

	/**
	 * The refusal of a kind whose scripts do not wait for replica acknowledgements: refused, never weaker.
	 */
	public static @Nullable RuntimeException withoutReplicaAcks(LockRequest request, boolean replicaAcks) {
		return replicaAcks ? request.mode().unsupported(request.key(), "this engine with replica acknowledgements "
				+ "(distlock.replica-acks)") : null;
	}

	/** The write lease a new acquisition of {@code owner} reads under (a downgrade), else null. */
	public @Nullable LeaseEntry downgradeFrom(LeaseRegistry registry, String redisKey, LockOwner owner) {
		return null;
	}

	// ---- acquisition

	/**
	 * A new acquisition on the calling thread, the owner's held lease (if any) not re-entered: by default tries of
	 * the acquire script with a fresh owner id, waiting on release messages between them.
	 */
	public Optional<Lease> acquireNew(LeaseAcquirer acquirer, LockRequest request, String redisKey, LockOwner owner,
			long start, long deadline) throws InterruptedException {
		return acquirer.acquireNew(request, acquirer.newAttempt(request, redisKey, owner), start, deadline);
	}

	/** An acquisition without a thread that waits: by default an {@link AsyncAcquisition}. */
	public CompletableFuture<Optional<Lease>> acquireAsync(AsyncEngine engine, LockRequest request, String redisKey,
			LockOwner owner) {
		return new AsyncAcquisition(engine, this, request, redisKey, owner).start();
	}

	/**
	 * An asynchronous acquisition found its owner's lease gone on re-entry: true when this kind acquires anew its own
	 * way (completing {@code result} unless {@code claimEnd} says it ended meanwhile), false to go on with the
	 * {@link AsyncAcquisition}'s attempts.
	 */
	public boolean reacquireAsync(AsyncEngine engine, LockRequest request, String redisKey, LockOwner owner,
			CompletableFuture<Optional<Lease>> result, BooleanSupplier claimEnd) {
		return false;
	}

	/**
	 * One call of the acquire script for {@code attempt} (see {@link AcquireCall#call}): {hold count, token} when
	 * acquired, {0, holder's remaining ttl} when held by another owner.
	 */
	public abstract long[] acquire(AcquireCall call, LockRequest request, Attempt attempt, boolean willWait);

	/** {@link #acquire} on Lettuce's asynchronous commands; null when that path is not available. */
	public abstract @Nullable CompletableFuture<long[]> acquireAsync(AcquireCall call, Attempt attempt, boolean willWait);

	/**
	 * Whether others may hold the lock with a holder of this kind (readers): a waiter that got in then wakes the other
	 * waiters of this process (see {@link ReleaseSubscriber#unregister(Waiter, boolean, boolean)}).
	 */
	public boolean admitsOthers() {
		return false;
	}

	/** One more hold of {@code entry}'s lease in Redis, raising its count to {@code target}: {holds, token}. */
	public abstract long[] reenter(LeaseStore store, LeaseEntry entry, long ttlMillis, long target);

	// ---- holding

	/** The hold's new remaining ms after adding {@code millis} or setting it, -1 when it is not ours. */
	public abstract long extend(LeaseStore store, LeaseEntry entry, long millis, boolean add);

	/** The hold's remaining ms when it is still ours, else -1. */
	public abstract long owned(LeaseStore store, LeaseEntry entry);

	/**
	 * The script that renews leases of this kind in batches ({@code RenewalBatches}): leases are batched with others
	 * of the same script only.
	 */
	@SuppressWarnings("rawtypes")
	public abstract RedisScript<List> renewAllScript();

	/**
	 * Whether an owner of this kind may wait in a queue in Redis: the {@link HoldReconciler}'s discard of it then
	 * leaves that queue (and hands on a lease it holds) rather than deleting the lease.
	 */
	public boolean queued() {
		return false;
	}

	// ---- release

	/**
	 * Whether a release may hand the lease straight to a waiter of this process: a waiting thread, or an asynchronous
	 * acquisition of this kind (issue 31).
	 */
	public boolean handsOverLocally() {
		return false;
	}

	/**
	 * The release of one hold of {@code lease} on the calling thread, applied to this process's picture through the
	 * {@code releaser} (which throws as {@link LeaseReleaser#release} does).
	 */
	public abstract void release(LeaseReleaser releaser, RedisLease lease, Duration held);

	/**
	 * {@link #release} sent without blocking, its reply applied on the releaser's pool, completing {@code done}; false
	 * when this release has to run {@link #release} on the pool instead (that path is not available, or its reply may
	 * hand the lease to a thread of this process).
	 */
	public boolean releaseAsync(LeaseReleaser releaser, RedisLease lease, CompletableFuture<Void> done) {
		return false;
	}

	@Override
	public String toString() {
		return getClass().getSimpleName();
	}

}
