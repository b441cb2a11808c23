package dev.distlock.redis;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The lease scripts' kept commands of Lettuce's shared native connection ({@code LettuceSharedCommands}): used only
 * while they are what the factory would hand out, never once the factory closed, replaced or stopped that connection,
 * nor when it validates its connection per call.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LettuceSharedCommandsIntegrationTests {

	private static final long TTL_MILLIS = 30_000;

	@Test
	void scriptsRunOnTheKeptCommandsUntilTheFactoryResetsItsSharedConnection() {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			LettuceConnectionFactory factory = (LettuceConnectionFactory) support.connectionFactory();
			LeaseStore store = new LeaseStore(factory, true);
			assertThat(store.keptCommands()).isNull();
			long[] first = store.acquire("lock:{a}", "owner-1", TTL_MILLIS, "", 0, 0, "");
			assertThat(first[0]).isEqualTo(1);
			Object kept = store.keptCommands();
			assertThat(kept).isNotNull();
			assertThat(store.release("lock:{a}", "owner-1", first[1], "lock:{a}:released", "client", 1, 30_000).holdsLeft())
				.isZero();
			assertThat(store.keptCommands()).isSameAs(kept);

			factory.resetConnection(); // closes the shared connection: its commands must not be used again
			assertThat(store.keptCommands()).isNull();
			long[] second = store.acquire("lock:{a}", "owner-2", TTL_MILLIS, "client", 0, 0, "");
			assertThat(second[0]).isEqualTo(1);
			assertThat(store.keptCommands()).isNotNull().isNotSameAs(kept);
			assertThat(store.release("lock:{a}", "owner-2", second[1], "lock:{a}:released", "client", 1, 30_000).holdsLeft())
				.isZero();
			assertThat((Long) server.execute("EXISTS", "lock:{a}")).isZero();
		}
	}

	@Test
	void aScriptRedisLostIsSentAgainInFull() {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			LeaseStore store = new LeaseStore(support.connectionFactory(), true);
			long[] held = store.acquire("lock:{d}", "owner-1", TTL_MILLIS, "", 0, 0, "");
			server.execute("SCRIPT", "FLUSH"); // EVALSHA now fails with NOSCRIPT: the script goes with EVAL
			assertThat(store.release("lock:{d}", "owner-1", held[1], "lock:{d}:released", "client", 1, 30_000).holdsLeft())
				.isZero();
			server.execute("SCRIPT", "FLUSH");
			long[] again = store.acquire("lock:{d}", "owner-2", TTL_MILLIS, "", 0, 0, "");
			assertThat(again[0]).isEqualTo(1);
			assertThat(again[1]).isGreaterThan(held[1]);
			assertThat(store.discard("lock:{d}", "owner-2", "lock:{d}:released")).isTrue(); // an integer reply
		}
	}

	@Test
	void aStoppedFactoryIsNotBypassedAndARestartedOneIsUsedAgain() {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			LettuceConnectionFactory factory = (LettuceConnectionFactory) support.connectionFactory();
			LeaseStore store = new LeaseStore(factory, true);
			long[] held = store.acquire("lock:{b}", "owner-1", TTL_MILLIS, "", 0, 0, "");
			assertThat(store.keptCommands()).isNotNull();

			factory.stop();
			assertThat(store.keptCommands()).isNull();
			assertThatException().isThrownBy(() -> store.release("lock:{b}", "owner-1", held[1], "lock:{b}:released",
					"client", 1, 30_000));
			assertThat((Long) server.execute("EXISTS", "lock:{b}")).isOne(); // the stopped factory sent nothing

			factory.start();
			assertThat(store.release("lock:{b}", "owner-1", held[1], "lock:{b}:released", "client", 1, 30_000).holdsLeft())
				.isZero();
			assertThat(store.keptCommands()).isNotNull();
		}
	}

	@Test
	void aFactoryThatValidatesItsConnectionIsAskedOnEveryCall() {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			LettuceConnectionFactory factory = (LettuceConnectionFactory) support.connectionFactory();
			factory.setValidateConnection(true);
			LeaseStore store = new LeaseStore(factory, true);
			long[] held = store.acquire("lock:{c}", "owner-1", TTL_MILLIS, "", 0, 0, "");
			assertThat(held[0]).isEqualTo(1);
			assertThat(store.keptCommands()).isNull();
			assertThat(store.release("lock:{c}", "owner-1", held[1], "lock:{c}:released", "client", 1, 30_000).holdsLeft())
				.isZero();
		}
	}

	@Test
	void theServiceAcquiresAndReleasesBlockingAndAsynchronouslyAcrossAReset() throws Exception {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			LettuceConnectionFactory factory = (LettuceConnectionFactory) support.connectionFactory();
			RedisLockService service = support.service(RedisLockService.builder(factory));
			LockRequest request = LockRequest.of("reset", Duration.ofSeconds(30), Duration.ofSeconds(5));
			for (int round = 0; round < 3; round++) {
				try (Lease lease = service.tryAcquire(request).orElseThrow()) {
					assertThat(lease.isOwned()).isTrue();
				}
				Optional<Lease> async = service.tryAcquireAsync(request, LockOwner.newOwner()).get(10, TimeUnit.SECONDS);
				assertThat(async).isPresent();
				async.get().releaseAsync().get(10, TimeUnit.SECONDS);
				assertThat(service.activeLeaseCount()).isZero();
				assertThat((Long) server.execute("EXISTS", service.redisKey("reset"))).isZero();
				factory.resetConnection();
			}
		}
	}

}
