package dev.distlock.redis.internal.kind;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.single.AcquireCall;
import dev.distlock.redis.internal.single.Attempt;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.single.LeaseReleaser;
import dev.distlock.redis.internal.single.LockKind;
import dev.distlock.redis.internal.single.RedisLease;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.wait.Waiter;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The exclusive lock ({@link LockMode#EXCLUSIVE}): the plain lease hash of {@link LockScripts}, one owner at a time.
 * Its release may hand the lease straight to a waiter of this process, a thread or an asynchronous acquisition (at most
 * {@code localHandOvers} times in a row, so that other processes get their turn). The fair kind shares its lease
 * scripts ({@link FairKind}).
 */
public class ExclusiveKind extends LockKind {

	public static final ExclusiveKind INSTANCE = new ExclusiveKind();

	/**
	 * How long this process's threads hold back after it released a lock that other processes were waiting for: long
	 * enough for the release message to reach them and their attempt to reach Redis on a loaded machine.
	 */
	private static final long YIELD_NANOS = TimeUnit.MILLISECONDS.toNanos(3);

	ExclusiveKind() {
	}

	@Override
	public LockMode mode() {
		return LockMode.EXCLUSIVE;
	}

	@Override
	public long[] acquire(AcquireCall call, LockRequest request, Attempt attempt, boolean willWait) {
		return call.acquirePlain(request, attempt, willWait);
	}

	@Override
	public @Nullable CompletableFuture<long[]> acquireAsync(AcquireCall call, Attempt attempt, boolean willWait) {
		return call.acquirePlainAsync(attempt, willWait);
	}

	@Override
	public long[] reenter(LeaseStore store, LeaseEntry entry, long ttlMillis, long target) {
		return store.acquire(entry.redisKey, entry.owner, ttlMillis, "", entry.token, target, "");
	}

	@Override
	public long extend(LeaseStore store, LeaseEntry entry, long millis, boolean add) {
		return store.extend(entry.redisKey, entry.owner, entry.token, millis, add);
	}

	@Override
	public long owned(LeaseStore store, LeaseEntry entry) {
		return store.owned(entry.redisKey, entry.owner, entry.token);
	}

	@Override
	@SuppressWarnings("rawtypes")
	public RedisScript<List> renewAllScript() {
		return LockScripts.RENEW_ALL;
	}

	@Override
	public boolean handsOverLocally() {
		return true;
	}

	@Override
	public void release(LeaseReleaser releaser, RedisLease lease, Duration held) {
		LeaseEntry entry = lease.entry;
		if (handsOverLocally() && entry.handOvers < releaser.localHandOvers() && entry.holds() == 1
				&& entry.state() == LeaseEntry.State.HELD) {
			Waiter next = releaser.subscriber().reserveForHandOver(entry.channel, entry.owner);
			if (next != null && handOver(releaser, lease, entry, next, held)) {
				return;
			}
		}
		LeaseStore.Released reply;
		entry.releaseStarting();
		try {
			reply = releaser.store().release(entry.redisKey, entry.owner, entry.token, entry.channel,
					releaser.clientId(), entry.holdsBeforeRelease(), entry.ttlMillis());
		}
		catch (RuntimeException ex) {
			throw releaser.unreachable(lease, entry, held, ex);
		}
		settle(releaser, lease, held, reply);
	}

	/**
	 * Sent without blocking unless a waiter of this process that takes hand-overs (a thread, or an asynchronous
	 * acquisition) waits, to which the release may hand the lease: that one runs on the pool, as {@link #release}.
	 */
	@Override
	public boolean releaseAsync(LeaseReleaser releaser, RedisLease lease, CompletableFuture<Void> done) {
		LeaseEntry entry = lease.entry;
		if (handsOverLocally() && entry.handOvers < releaser.localHandOvers()
				&& releaser.subscriber().hasHandOverTaker(entry.channel)) {
			return false;
		}
		return releaser.sendAsync(lease, done,
				sent -> releaser.store().releaseAsync(sent.redisKey, sent.owner, sent.token, sent.channel,
						releaser.clientId(), sent.holdsBeforeRelease(), sent.ttlMillis()),
				(held, reply) -> settle(releaser, lease, held, reply));
	}

	/** What Redis answered to the release of a hold, applied to this process's picture (throws as release does). */
	private static void settle(LeaseReleaser releaser, RedisLease lease, Duration held, LeaseStore.Released reply) {
		LeaseEntry entry = lease.entry;
		long left = reply.holdsLeft();
		releaser.settle(lease, held, left, reply.publishRefused(), () -> {
			if (left == 0) {
				if (reply.othersWaiting()) {
					releaser.subscriber().yieldUntil(entry.channel, System.nanoTime() + YIELD_NANOS);
				}
				releaser.subscriber().releasedLocally(entry.channel, entry.token);
			}
			else if (releaser.reconciler().discardNow(entry)) {
				// Redis counted holds this process does not (re-entries whose replies were lost): the lease ends with
				// the last hold this process knows
				releaser.subscriber().releasedLocally(entry.channel, entry.token);
			}
		});
	}

	/**
	 * Hand the lease straight to {@code next}, a waiter of this process (a thread, or an asynchronous acquisition
	 * whose future then takes the lease on the engine's threads): one round trip, no release
	 * message, no race with other processes' waiters. At most {@code localHandOvers} times in a row, so that other
	 * processes get their turn. Returns false when the lease has to be released the normal way.
	 */
	private static boolean handOver(LeaseReleaser releaser, RedisLease lease, LeaseEntry entry, Waiter next,
			Duration held) {
		boolean granted = false;
		try {
			long sent = System.nanoTime();
			long token;
			entry.releaseStarting();
			try {
				token = releaser.store().handOver(entry.redisKey, entry.owner, entry.token, next.owner,
						next.ttlMillis, next.label);
			}
			catch (RuntimeException ex) {
				next.markHandOverUnanswered(); // the hand-over may yet run: the waiter's owner may get the lease
				throw releaser.unreachable(lease, entry, held, ex);
			}
			if (token == -2) {
				return false;
			}
			if (token < 0) {
				throw releaser.foundGone(lease, entry, held);
			}
			entry.releaseHold(true);
			releaser.ended(entry);
			next.grant(token, sent, entry.handOvers + 1);
			granted = true;
		}
		finally {
			if (!granted) {
				next.revert();
			}
		}
		releaser.released(lease, entry, held);
		return true;
	}

}
