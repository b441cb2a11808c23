package dev.distlock.redis.internal.kind;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.single.AsyncEngine;
import dev.distlock.redis.internal.single.FairAcquisition;
import dev.distlock.redis.internal.single.LeaseAcquirer;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.single.LeaseRegistry;
import dev.distlock.redis.internal.single.LeaseReleaser;
import dev.distlock.redis.internal.single.RedisLease;
import dev.distlock.redis.internal.store.FairStore;
import org.jspecify.annotations.Nullable;

/**
 * The fair lock ({@link LockMode#FAIR}, {@link FairScripts}): the plain lease of the exclusive kind (re-entry,
 * extension, ownership and renewal by its scripts), acquired in queue order by a {@link FairAcquisition}, and at its
 * last hold handed by the release script to the head of its queue in Redis. No local hand-over: it would jump the
 * queue.
 */
public final class FairKind extends ExclusiveKind {

	static final FairKind INSTANCE = new FairKind();

	private FairKind() {
	}

	@Override
	public LockMode mode() {
		return LockMode.FAIR;
	}

	@Override
	public @Nullable RuntimeException refusal(LockRequest request, String redisKey, LockOwner owner, LeaseRegistry registry,
			boolean replicaAcks) {
		// the fair scripts do not wait for replica acknowledgements
		return withoutReplicaAcks(request, replicaAcks);
	}

	@Override
	public Optional<Lease> acquireNew(LeaseAcquirer acquirer, LockRequest request, String redisKey, LockOwner owner,
			long start, long deadline) throws InterruptedException {
		FairAcquisition fair = new FairAcquisition(acquirer.fair(), request, redisKey, owner, start, true);
		fair.start(true);
		return await(fair, request);
	}

	/**
	 * Wait for a fair acquisition's result on the calling thread; an interrupt cancels the acquisition (a lease granted
	 * at that moment is released again) and is thrown.
	 */
	static Optional<Lease> await(FairAcquisition acquisition, LockRequest request) throws InterruptedException {
		try {
			// the deadline timer ends it; the margin covers its leave, itself bounded by the command timeout
			return acquisition.result().get(request.waitTime().toMillis() + TimeUnit.MINUTES.toMillis(2),
					TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			if (!acquisition.giveUp(null, true)) {
				Optional<Lease> granted = acquisition.result().getNow(Optional.empty());
				granted.ifPresent(Lease::close);
			}
			throw ex;
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (TimeoutException ex) {
			acquisition.giveUp(null, true);
			throw new LockUnavailableException(request.key(), "Could not acquire fair lock '"
					+ request.key() + "': the acquisition did not end within its wait", ex);
		}
	}

	/** A new fair acquisition, queued in Redis; an owner that holds the fair lease re-enters it as for other kinds. */
	@Override
	public CompletableFuture<Optional<Lease>> acquireAsync(AsyncEngine engine, LockRequest request, String redisKey,
			LockOwner owner) {
		if (engine.registry().heldBy(redisKey, owner, LockMode.FAIR) == null) {
			return engine.acquirer().fair().acquireAsync(request, redisKey, owner);
		}
		return super.acquireAsync(engine, request, redisKey, owner);
	}

	/** The owner's fair lease was gone: a new fair acquisition, queued in Redis, completes {@code result}. */
	@Override
	public boolean reacquireAsync(AsyncEngine engine, LockRequest request, String redisKey, LockOwner owner,
			CompletableFuture<Optional<Lease>> result, BooleanSupplier claimEnd) {
		engine.acquirer().fair().reacquire(request, redisKey, owner, result, claimEnd);
		return true;
	}

	@Override
	public boolean queued() {
		return true;
	}

	@Override
	public boolean handsOverLocally() {
		return false;
	}

	/**
	 * The release of a fair lease: no local hand-over (it would jump the queue); at its last hold the script hands the
	 * lease to the head of the queue in Redis, and when that waiter is in this process it is told at once, without
	 * waiting for the message.
	 */
	@Override
	public void release(LeaseReleaser releaser, RedisLease lease, Duration held) {
		LeaseEntry entry = lease.entry;
		FairStore.FairReleased reply;
		entry.releaseStarting();
		try {
			reply = releaser.store().fair().release(entry.redisKey, entry.owner, entry.token, entry.channel,
					entry.holdsBeforeRelease(), entry.ttlMillis());
		}
		catch (RuntimeException ex) {
			throw releaser.unreachable(lease, entry, held, ex);
		}
		releaser.settle(lease, held, reply.holdsLeft(), reply.publishRefused(), () -> {
			String next = reply.nextOwner();
			if (reply.holdsLeft() > 0) {
				// Redis counted holds this process does not: the lease ends with the last hold this process knows
				releaser.reconciler().discard(entry, true);
			}
			else if (next != null) {
				releaser.subscriber().fairHandedOver(FairScripts.handOverChannel(entry.channel, next), next,
						reply.nextToken());
			}
			else {
				releaser.subscriber().releasedLocally(entry.channel, entry.token);
			}
		});
	}

	/** A fair release runs on the pool (blocking): its reply may hand the lease to a waiter of this process. */
	@Override
	public boolean releaseAsync(LeaseReleaser releaser, RedisLease lease, CompletableFuture<Void> done) {
		return false;
	}

}
