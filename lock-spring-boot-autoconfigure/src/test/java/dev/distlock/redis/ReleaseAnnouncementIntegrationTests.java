package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The release script publishes only when the lease holds a waiter note (issue 15): every kind of waiter must still
 * wake at a release, long before the holder's lease (30 s) would run out, and a release nobody waits for publishes
 * nothing. Every deadline below is shorter than the lease, so only a release message (or a release in the same
 * instance) can end a wait in time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReleaseAnnouncementIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	/** Shorter than {@link #TTL}: a waiter that missed the release would still be asleep. */
	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static final Duration WAIT = Duration.ofSeconds(25);

	@Test
	void anAsyncWaiterWakesWhenAHolderInAnotherInstanceReleases() throws Exception {
		RedisLockService holderService = this.support.service();
		RedisLockService service = this.support.service();
		Lease held = holderService.acquire("cross", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = service
			.tryAcquireAsync(LockRequest.of("cross", TTL, WAIT), LockOwner.newOwner());
		awaitSubscribed(service, "cross", 1);
		held.release();
		// only the message can wake it: the holder's instance has no waiter of its own to wake
		Lease lease = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
		assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());

		lease.release();

		// and the other way round: a waiting thread of the first instance wakes at the async holder's release
		Lease asyncHeld = service.acquireAsync(LockRequest.of("back", TTL, Duration.ZERO), LockOwner.newOwner())
			.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		CompletableFuture<Lease> thread = CompletableFuture.supplyAsync(() -> holderService.acquire("back", TTL, WAIT));
		await().atMost(DEADLINE).until(() -> holderService.waitingThreads() == 1);
		awaitSubscribed(holderService, "back", 1);
		asyncHeld.releaseAsync().get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		Lease next = thread.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(next.fencingToken()).isGreaterThan(asyncHeld.fencingToken());
		next.release();
		assertThat(this.server.execute("EXISTS", service.redisKey("cross"))).isEqualTo(0L);
		assertThat(this.server.execute("EXISTS", service.redisKey("back"))).isEqualTo(0L);
	}

	@Test
	void aWaiterInAnotherInstanceAndAnAsyncWaiterInTheSameInstanceBothGetTheLeaseLongBeforeItsTtl() throws Exception {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		Lease held = service.acquire("both", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> async = service
			.tryAcquireAsync(LockRequest.of("both", TTL, WAIT), LockOwner.newOwner());
		await().atMost(DEADLINE).until(() -> service.waitingThreads() == 1);
		CompletableFuture<Lease> thread = CompletableFuture.supplyAsync(() -> other.acquire("both", TTL, WAIT));
		await().atMost(DEADLINE).until(() -> other.waitingThreads() == 1);
		awaitSubscribed(other, "both", 2);
		held.release();
		// whichever gets it first releases it; the other then gets it, both within a third of the holder's lease
		Object winner = CompletableFuture.anyOf(async, thread).get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		Lease first = (winner instanceof Optional<?> optional) ? (Lease) optional.orElseThrow() : (Lease) winner;
		assertThat(async.isDone() && thread.isDone()).isFalse();
		first.release();
		Lease second = (winner instanceof Optional<?>) ? thread.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
				: async.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		second.release();
		assertThat(service.waitingThreads() + other.waitingThreads()).isZero();
	}

	@Test
	void aReleaseNobodyWaitsForPublishesNothingAndOneAWaiterNotedPublishesItsToken() throws Exception {
		RedisLockService service = this.support.service();
		String channel = RedisLockService.channel(service.redisKey("quiet"));
		List<String> messages = new CopyOnWriteArrayList<>();
		RedisClient client = RedisClient.create(RedisURI.create(this.server.host(), this.server.port()));
		try (StatefulRedisPubSubConnection<String, String> listener = client.connectPubSub()) {
			listener.addListener(new RedisPubSubAdapter<>() {

				@Override
				public void message(String from, String message) {
					messages.add(message);
				}

			});
			listener.sync().subscribe(channel);

			// uncontended: nobody noted that it waits, so the release is not announced; a probe published after it
			// arrives on the same connection, so the release's message, had there been one, would have come first
			Lease quiet = service.acquire("quiet", TTL, Duration.ZERO);
			quiet.release();
			this.server.execute("PUBLISH", channel, "probe");
			await().atMost(DEADLINE).until(() -> !messages.isEmpty());
			assertThat(messages).containsExactly("probe");

			// a waiter of another instance noted itself: the release is announced with the released lease's token,
			// naming that instance, the one that has waited longest (issue 31)
			RedisLockService other = this.support.service();
			Lease held = service.acquire("quiet", TTL, Duration.ZERO);
			CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> other.acquire("quiet", TTL, WAIT));
			await().atMost(DEADLINE).until(() -> other.waitingThreads() == 1);
			held.release();
			Lease next = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
			await().atMost(DEADLINE).until(() -> messages.size() == 2);
			assertThat(messages).containsExactly("probe",
					held.fencingToken() + dev.distlock.redis.internal.script.LockScripts.NAMED_SEPARATOR
							+ other.clientId());
			next.release();
		}
		finally {
			client.shutdown();
		}
	}

	/** The release channel of {@code key} has {@code subscribers} subscribers on the server. */
	private void awaitSubscribed(RedisLockService service, String key, long subscribers) {
		String channel = RedisLockService.channel(service.redisKey(key));
		await().atMost(DEADLINE)
			.until(() -> List.of(channel, subscribers).equals(this.server.execute("PUBSUB", "NUMSUB", channel)));
	}

}
