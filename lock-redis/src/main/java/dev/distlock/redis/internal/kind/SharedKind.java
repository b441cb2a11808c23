package dev.distlock.redis.internal.kind;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.single.AcquireCall;
import dev.distlock.redis.internal.single.Attempt;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.single.LeaseRegistry;
import dev.distlock.redis.internal.single.LeaseReleaser;
import dev.distlock.redis.internal.single.LockKind;
import dev.distlock.redis.internal.single.ReadWriteLocks;
import dev.distlock.redis.internal.single.RedisLease;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.ReadWriteStore;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The kinds whose lease several holders share, each with its own deadline: the read and write locks
 * ({@link ReadWriteKind}, on {@link ReadWriteScripts}) and the permits of a semaphore ({@link PermitKind}, on
 * {@code PermitScripts}), one lease hash reached through a {@link ReadWriteStore} each. Never handed over (several
 * holders may enter at once); renewed in batches of their own; the scripts do not wait for replica acknowledgements,
 * so such requests are refused on an engine that asks for them.
 */
abstract class SharedKind extends LockKind {

	/** {@return what the acquire script is told this holder is: "w", "r", or the number of permits} */
	abstract String role();

	/** {@return the calls of this kind's scripts on {@code store}} */
	abstract ReadWriteStore calls(LeaseStore store);

	/** What the engine refuses of such a request before any call to Redis (see {@link ReadWriteLocks}). */
	@Override
	public @Nullable RuntimeException refusal(LockRequest request, String redisKey, LockOwner owner, LeaseRegistry registry,
			boolean replicaAcks) {
		// their scripts do not wait for replica acknowledgements
		return withoutReplicaAcks(request, replicaAcks);
	}

	@Override
	public long[] acquire(AcquireCall call, LockRequest request, Attempt attempt, boolean willWait) {
		noteWaitingWriter(attempt, willWait);
		return calls(call.store()).acquire(attempt, role(), willWait);
	}

	@Override
	public @Nullable CompletableFuture<long[]> acquireAsync(AcquireCall call, Attempt attempt, boolean willWait) {
		noteWaitingWriter(attempt, willWait);
		return calls(call.store()).acquireAsync(attempt, role(), willWait);
	}

	/** Marks {@code attempt}, before its call, when the call leaves a waiting writer's note in the lease. */
	private void noteWaitingWriter(Attempt attempt, boolean willWait) {
		if (ReadWriteStore.notesWaitingWriter(ReadWriteStore.WRITER.equals(role()), willWait)) {
			attempt.unanswered = true; // its note is in Redis (or may be): discarded unless the lock is acquired
		}
	}

	@Override
	public long[] reenter(LeaseStore store, LeaseEntry entry, long ttlMillis, long target) {
		return calls(store).reenter(entry, role(), ttlMillis, target);
	}

	@Override
	public long extend(LeaseStore store, LeaseEntry entry, long millis, boolean add) {
		return calls(store).extend(entry, millis, add);
	}

	@Override
	public long owned(LeaseStore store, LeaseEntry entry) {
		return calls(store).owned(entry);
	}

	@Override
	@SuppressWarnings("rawtypes")
	public RedisScript<List> renewAllScript() {
		return ReadWriteScripts.RENEW_ALL;
	}

	/**
	 * The release of a hold: no hand-over (several holders may enter at once), and local waiters woken only when the
	 * release let others in, all of them (as its message wakes every waiter of other processes).
	 */
	@Override
	public void release(LeaseReleaser releaser, RedisLease lease, Duration held) {
		ReadWriteStore.Released reply;
		lease.entry.releaseStarting();
		try {
			reply = calls(releaser.store()).release(lease.entry);
		}
		catch (RuntimeException ex) {
			throw releaser.unreachable(lease, lease.entry, held, ex);
		}
		settle(releaser, lease, held, reply);
	}

	/** Always sent without blocking where that path is available: it never hands the lease to a waiter. */
	@Override
	public boolean releaseAsync(LeaseReleaser releaser, RedisLease lease, CompletableFuture<Void> done) {
		return releaser.sendAsync(lease, done, sent -> calls(releaser.store()).releaseAsync(sent),
				(held, reply) -> settle(releaser, lease, held, reply));
	}

	/** What Redis answered to the release of a hold, applied to this process's picture (throws as release does). */
	private static void settle(LeaseReleaser releaser, RedisLease lease, Duration held,
			ReadWriteStore.Released reply) {
		LeaseEntry entry = lease.entry;
		releaser.settle(lease, held, reply.holdsLeft(), reply.publishRefused(), () -> {
			if (reply.message() != null) {
				releaser.subscriber().releasedLocallyToAll(entry.channel, reply.message());
			}
			else if (reply.holdsLeft() > 0) {
				// Redis counted holds this process does not: they go (the discard publishes when that frees the
				// lock, and the message wakes this process's waiters too)
				releaser.reconciler().discardNow(entry);
			}
		});
	}

}
