package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Lost replies of the read-write scripts ("every call that timed out may have run"): what such a call left in Redis
 * is removed once Redis answers again, and only the caller's own hold or note, never another reader's hold.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadWriteLockFaultIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	/**
	 * How long a call waits for its lost reply: the window in which a test sees the hold the script wrote before the
	 * reconciler's discard removes it. 500 ms was too short on a loaded machine (a build with two CPU hogs and another
	 * build beside it: the poll never ran inside it).
	 */
	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	@Test
	void aReadAcquireWhoseReplyIsLostLeavesNoHoldAndOtherReadersKeepTheirs() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-acquire");
			warmUp(client, "lost-acquire");
			Lease other = others.tryAcquire(read("lost-acquire")).orElseThrow();
			proxy.dropReplies();
			CompletableFuture<Void> attempt = CompletableFuture.runAsync(() -> assertThatExceptionOfType(
					LockUnavailableException.class).isThrownBy(() -> client.tryAcquire(read("lost-acquire"))));
			// the script ran: Redis counts a hold the client does not know (watched while the call waits for its
			// reply: once it gave up, the reconciler's discard, whose reply is lost too, may already have run)
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2))
				.until(() -> fields(key).stream().anyMatch(field -> field.startsWith(client.clientId())));
			attempt.get(30, TimeUnit.SECONDS);
			proxy.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> fields(key).stream()
				.noneMatch(field -> field.contains(client.clientId())));
			assertThat(fields(key)).contains(other.owner());
			assertThat(other.isOwned()).isTrue();
			other.release();
			assertThat(LockTestSupport.leftKeys(server)).isEmpty();
		}
	}

	@Test
	void aReadReleaseWhoseReplyIsLostEndsTheHoldAndOtherReadersKeepTheirs() {
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-release");
			warmUp(client, "lost-release");
			Lease mine = client.tryAcquire(read("lost-release")).orElseThrow();
			Lease mineAgain = client.tryAcquire(read("lost-release")).orElseThrow();
			Lease other = others.tryAcquire(read("lost-release")).orElseThrow();
			mineAgain.release();
			proxy.dropReplies();
			assertThatExceptionOfType(LockException.class).isThrownBy(mine::release);
			proxy.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> fields(key).stream()
				.noneMatch(field -> field.contains(client.clientId())));
			assertThat(client.activeLeases()).isEmpty();
			assertThat(other.isOwned()).isTrue();
			other.release();
			assertThat(LockTestSupport.leftKeys(server)).isEmpty();
		}
	}

	@Test
	void aWaitingWriterWhoseRepliesAreLostLeavesNoNoteThatKeepsReadersOut() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-note");
			warmUp(client, "lost-note");
			Lease reader = others.tryAcquire(read("lost-note")).orElseThrow();
			proxy.dropReplies();
			CompletableFuture<Void> attempt = CompletableFuture.runAsync(() -> assertThatExceptionOfType(
					LockUnavailableException.class).isThrownBy(() -> client
						.tryAcquire(LockRequest.of("lost-note", TTL, Duration.ofSeconds(2)).write())));
			// the writer's note is in Redis while it waits (watched then: the discard after it gave up may remove it)
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2))
				.until(() -> fields(key).stream().anyMatch(field -> field.startsWith("~q:" + client.clientId())));
			attempt.get(30, TimeUnit.SECONDS);
			proxy.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> fields(key).stream().noneMatch(f -> f.startsWith("~q:")));
			// a new reader is not kept out by the writer that gave up
			Lease newReader = others.tryAcquire(LockRequest.of("lost-note", TTL, Duration.ZERO).read()).orElseThrow();
			newReader.release();
			reader.release();
			assertThat(LockTestSupport.leftKeys(server)).isEmpty();
		}
	}

	@Test
	void aPartitionedReaderEndsAtItsTtlAndItsLateRenewalsDoNotReviveIt() throws Exception {
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("partitioned");
			warmUp(client, "partitioned");
			ReadWriteLockIntegrationTests.warmUp(others);
			Duration ttl = Duration.ofMillis(1000);
			Lease reader = client.tryAcquire(LockRequest.of("partitioned", ttl, Duration.ZERO).read()).orElseThrow();
			proxy.blackhole();
			Future<Lease> writer = thread.submit(() -> others.tryAcquire(LockRequest.of("partitioned", TTL,
					Duration.ofSeconds(30)).write()).orElseThrow());
			Lease written = writer.get(30, TimeUnit.SECONDS);
			await().atMost(Duration.ofSeconds(20)).until(reader::isLost);
			// the renewals the partition held run now: they find the reader's deadline passed and revive nothing
			proxy.heal();
			// a call on the client's connection answered: what the partition held on it ran before
			await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> client.holder("partitioned").isPresent());
			assertThat(written.isOwned()).isTrue();
			assertThat(fields(key)).doesNotContain(reader.owner(), "~e:" + reader.owner());
			assertThatExceptionOfType(LockException.class).isThrownBy(reader::release);
			written.release();
			await().atMost(Duration.ofSeconds(20)).until(() -> LockTestSupport.leftKeys(server).isEmpty());
		}
		finally {
			thread.shutdownNow();
		}
	}

	/** Every script once through the proxy, before any fault: the first calls load the client's code. */
	private static void warmUp(RedisLockService client, String key) {
		Lease lease = client.tryAcquire(LockRequest.of(key + "-warm-up", TTL, Duration.ofSeconds(10)).write())
			.orElseThrow();
		lease.isOwned();
		lease.release();
	}

	private static LockRequest read(String key) {
		return LockRequest.of(key, TTL, Duration.ZERO).read();
	}

	private List<String> fields(String redisKey) {
		Object reply = server.execute("HKEYS", redisKey);
		List<String> fields = new ArrayList<>();
		if (reply instanceof List<?> list) {
			list.forEach(field -> fields.add(String.valueOf(field)));
		}
		return fields;
	}

}
