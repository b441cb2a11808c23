package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The free-key path of {@link LockScripts#ACQUIRE} under faults (issue 31 sends its {@code PEXPIRE} without the
 * prelude's helper): a new lease whose reply is lost has an expiry while it is in Redis and is removed once Redis
 * answers again; the call run twice holds once, with the token Redis keeps and an expiry; the script run twice by
 * hand adopts its own hold with a greater token and keeps the expiry and the label.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FreeKeyAcquireFaultIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	/** How long a call waits for its lost reply: long enough to watch what its script left in Redis meanwhile. */
	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	@Test
	void aFreeKeyAcquireWhoseReplyIsLostLeavesAHoldWithAnExpiryThatTheClientRemoves() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-free");
			client.tryAcquire(plain("lost-free-warm-up")).orElseThrow().release();
			proxy.dropReplies();
			CompletableFuture<Void> attempt = CompletableFuture.runAsync(() -> assertThatExceptionOfType(
					LockUnavailableException.class).isThrownBy(() -> client.tryAcquire(plain("lost-free"))));
			// the script ran: Redis holds a lease the client does not know, and it expires by itself (watched while the
			// call waits for its reply: once it gave up, the reconciler's discard may already have run)
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2))
				.until(() -> fields(key).stream().anyMatch(field -> field.startsWith(client.clientId())));
			long ttl = (Long) this.server.execute("PTTL", key);
			assertThat(ttl).as("the lost lease's expiry").isBetween(1L, TTL.toMillis());
			attempt.get(30, TimeUnit.SECONDS);
			proxy.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> fields(key).isEmpty());
			Lease other = others.tryAcquire(plain("lost-free")).orElseThrow();
			other.release();
			assertThat(client.activeLeases()).isEmpty();
			assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
		}
	}

	@Test
	void aFreeKeyAcquireRunTwiceHoldsOnceWithTheTokenRedisKeepsAndAnExpiry() {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory()));
			this.server.execute("SCRIPT", "LOAD", LockScripts.ACQUIRE.getScriptAsString());
			String key = client.redisKey("twice-free");

			proxy.redeliverNext(LockScripts.ACQUIRE.getSha1());
			Lease lease = client.tryAcquire(plain("twice-free")).orElseThrow();

			assertThat(proxy.redeliveries()).isEqualTo(1);
			assertThat(this.server.execute("HGET", key, lease.owner())).isEqualTo("1");
			assertThat(this.server.execute("HGET", key, LockScripts.TOKEN_FIELD))
				.isEqualTo(Long.toString(lease.fencingToken()));
			assertThat((Long) this.server.execute("PTTL", key)).isBetween(1L, TTL.toMillis());
			assertThat(lease.isOwned()).isTrue();
			lease.release();
			assertThat(this.server.execute("EXISTS", key)).isEqualTo(0L);
		}
	}

	@Test
	void theFreeKeyPathRunTwiceAdoptsItsHoldWithAGreaterTokenAndKeepsItsExpiryAndLabel() {
		String key = "lock:{free-twice}";
		List<String> args = List.of("owner-1", "30000", "", "", "", "", "app@host thread \"main\"");
		List<?> first = this.support.template().execute(LockScripts.ACQUIRE, List.of(key), args.toArray());
		this.server.execute("PEXPIRE", key, "5000"); // the second run must set the lease time again
		List<?> second = this.support.template().execute(LockScripts.ACQUIRE, List.of(key), args.toArray());

		assertThat(first).hasSize(2).first().isEqualTo(1L);
		assertThat(second).hasSize(2).first().isEqualTo(1L);
		assertThat((Long) second.get(1)).isGreaterThan((Long) first.get(1));
		assertThat(this.server.execute("HGET", key, "owner-1")).isEqualTo("1");
		assertThat(this.server.execute("HGET", key, LockScripts.TOKEN_FIELD)).isEqualTo(second.get(1).toString());
		assertThat(this.server.execute("HGET", key, LockScripts.LABEL_PREFIX + "owner-1"))
			.isEqualTo("app@host thread \"main\"");
		assertThat((Long) this.server.execute("PTTL", key)).isBetween(5001L, 30000L);
	}

	private static LockRequest plain(String key) {
		return LockRequest.of(key, TTL, Duration.ZERO);
	}

	private List<String> fields(String redisKey) {
		Object reply = this.server.execute("HKEYS", redisKey);
		List<String> fields = new ArrayList<>();
		if (reply instanceof List<?> list) {
			list.forEach(field -> fields.add(String.valueOf(field)));
		}
		return fields;
	}

}
