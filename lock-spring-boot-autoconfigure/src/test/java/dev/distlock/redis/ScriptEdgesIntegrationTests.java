package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * What the lease scripts leave behind at their edges: a key a script created is never left without expiry when Redis
 * refuses its {@code PEXPIRE}, and releases that have nobody to wake publish nothing (issue 25).
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ScriptEdgesIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
		server.execute("ACL", "SETUSER", "nopexpire", "on", ">pw", "~*", "&*", "+@all", "-pexpire");
	}

	@Test
	void aScriptRefusedItsExpiryDeletesTheKeyItCreatedBeforeItAnswers() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(user("nopexpire", "pw"));
		factory.afterPropertiesSet();
		factory.start();
		try {
			StringRedisTemplate template = LockTestSupport.template(factory);
			// each script that creates a lease or a queue key, called as it is by the engine, by a user without PEXPIRE
			assertThatException().isThrownBy(() -> template.execute(LockScripts.ACQUIRE, List.of("edges:{plain}"),
					"owner-1", "30000", "", "", ""))
				.withStackTraceContaining("run");
			assertThat(server.execute("EXISTS", "edges:{plain}")).isEqualTo(0L);

			assertThatException().isThrownBy(() -> template.execute(FairScripts.FAIR_ACQUIRE,
					FairScripts.keys("edges:{fair}"), "owner-2", "30000", "2000", "1"))
				.withStackTraceContaining("run");
			assertThat(LockTestSupport.leftKeys(server, "edges:{fair}*")).isEmpty();

			assertThatException().isThrownBy(() -> template.execute(ReadWriteScripts.ACQUIRE, List.of("edges:{rw}"),
					"owner-3", "30000", "w", "", "", "", "", "", ""))
				.withStackTraceContaining("run");
			assertThat(server.execute("EXISTS", "edges:{rw}")).isEqualTo(0L);
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void releasesThatHaveNobodyToWakePublishNothing() throws Exception {
		List<String> messages = new CopyOnWriteArrayList<>();
		RedisClient client = RedisClient.create(RedisURI.create(server.host(), server.port()));
		try (LockTestSupport support = LockTestSupport.forServer(server);
				StatefulRedisPubSubConnection<String, String> listener = client.connectPubSub()) {
			RedisLockService service = support.service();
			listener.addListener(new RedisPubSubAdapter<>() {

				@Override
				public void message(String pattern, String channel, String message) {
					messages.add(channel + " " + message);
				}

			});
			listener.sync().psubscribe("lock:{quiet-*");

			// a read release, a write release and a fair release (empty queue), nobody waiting for any of them
			service.acquire(LockRequest.of("quiet-read", TTL, Duration.ZERO).read()).release();
			service.acquire(LockRequest.of("quiet-write", TTL, Duration.ZERO).write()).release();
			service.acquire(LockRequest.of("quiet-fair", TTL, Duration.ZERO).fair()).release();
			// a probe published after them arrives on the same connection, so their messages would have come first
			server.execute("PUBLISH", "lock:{quiet-probe}", "probe");
			await().atMost(DEADLINE).until(() -> !messages.isEmpty());
			assertThat(messages).containsExactly("lock:{quiet-probe} probe");

			// a reader of another instance waits for a writer: the writer's release is announced and wakes it
			RedisLockService other = support.service();
			Lease writer = service.acquire(LockRequest.of("quiet-write", TTL, Duration.ZERO).write());
			java.util.concurrent.CompletableFuture<Lease> reader = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> other.acquire(LockRequest.of("quiet-write", TTL, TTL).read()));
			await().atMost(DEADLINE).until(() -> other.waitingThreads() == 1);
			writer.release();
			Lease read = reader.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
			await().atMost(DEADLINE).until(() -> messages.size() == 2);
			assertThat(messages.get(1)).startsWith(RedisLockService.channel(service.redisKey("quiet-write")) + " *");
			read.release();
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * A waiting caller notes itself with each failed attempt; only the first writes (HSETNX), so a waiter retrying
	 * against a long-held lease does not make a replicated write per retry. Keyspace notifications show writes only:
	 * Redis announces {@code hset} when HSETNX set a field, nothing when the field was there.
	 */
	@Test
	void aWaitersRepeatedAttemptsWriteItsNoteOnce() throws Exception {
		List<String> events = new CopyOnWriteArrayList<>();
		server.execute("CONFIG", "SET", "notify-keyspace-events", "Kh");
		RedisClient client = RedisClient.create(RedisURI.create(server.host(), server.port()));
		try (LockTestSupport support = LockTestSupport.forServer(server);
				StatefulRedisPubSubConnection<String, String> listener = client.connectPubSub()) {
			listener.addListener(new RedisPubSubAdapter<>() {

				@Override
				public void message(String channel, String message) {
					events.add(message);
				}

			});
			listener.sync().subscribe("__keyspace@0__:edges:{noted}");
			StringRedisTemplate template = support.template();
			template.execute(LockScripts.ACQUIRE, List.of("edges:{noted}"), "holder", "30000", "", "", "");
			for (int attempt = 0; attempt < 3; attempt++) {
				assertThat(template.execute(LockScripts.ACQUIRE, List.of("edges:{noted}"), "waiter-" + attempt,
						"30000", "client-w", "", "")).first().isEqualTo(0L);
			}
			// a probe write after them arrives on the same connection, so their events would have come first
			server.execute("HINCRBY", "edges:{noted}", "~probe", "1");
			await().atMost(DEADLINE).until(() -> events.contains("hincrby"));
			assertThat(events).containsExactly("hset", "hset", "hincrby"); // the holder's lease, one note, the probe
			assertThat(template.opsForHash().keys("edges:{noted}")).contains("~w:client-w");
		}
		finally {
			server.execute("CONFIG", "SET", "notify-keyspace-events", "");
			client.shutdown();
		}
	}

	private static RedisStandaloneConfiguration user(String name, String password) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(server.host(), server.port());
		configuration.setUsername(name);
		configuration.setPassword(password);
		return configuration;
	}

}
