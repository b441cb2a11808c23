package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@code distlock.replica-acks}: a new lease counts only once the replicas acknowledged it, against a real master and
 * replica. A replica stopped with SIGSTOP stays connected but acknowledges nothing, which is what makes the shortfall
 * deterministic.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplicaAcksIntegrationTests {

	private static final Duration LONG_TTL = Duration.ofSeconds(30);

	/**
	 * Long enough that a healthy replica on a loaded 2-core machine acknowledges within it (with 300 ms, a replica
	 * process that waited for the CPU could fail an acquisition, issue 32); short against the client's command timeout
	 * (2 s for Jedis here, 5 s for Lettuce), which must outlast the script and its WAIT for the refusal to say why.
	 */
	private static final Duration ACK_TIMEOUT = Duration.ofSeconds(1);

	private static RedisServer master;

	private static RedisServer replica;

	private LockTestSupport support;

	@BeforeAll
	static void startMasterAndReplica() {
		master = RedisServer.start();
		replica = RedisServer.builder().config("replicaof", RedisServer.HOST, Integer.toString(master.port())).start();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> String.valueOf(replica.execute("INFO", "replication")).contains("master_link_status:up"));
	}

	@AfterAll
	static void stop() {
		replica.close();
		master.close();
	}

	@BeforeEach
	void open() {
		this.support = new LockTestSupport(master.host(), master.port(), Duration.ofSeconds(5));
	}

	@AfterEach
	void close() {
		replica.resume();
		this.support.close();
	}

	private RedisLockService service(int replicas) {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory()).replicaAcks(replicas, ACK_TIMEOUT));
	}

	@Test
	void everyModeButExclusiveIsRefusedAndSaysWhyForTheStartupCheck() {
		RedisLockService acknowledged = service(1);
		assertThat(acknowledged.modeRefusal(LockMode.EXCLUSIVE)).isEmpty();
		for (LockMode mode : List.of(LockMode.FAIR, LockMode.READ, LockMode.WRITE, LockMode.PERMITS)) {
			assertThat(acknowledged.modeRefusal(mode)).as(mode.name())
				.hasValueSatisfying(reason -> assertThat(reason).contains("distlock.replica-acks"));
			assertThatExceptionOfType(UnsupportedOperationException.class).as(mode.name())
				.isThrownBy(() -> acknowledged.tryAcquire(LockRequest.of("modes", Duration.ofSeconds(30), Duration.ZERO)
					.withMode(mode)));
		}
		RedisLockService plain = this.support.service();
		assertThat(List.of(LockMode.values())).allSatisfy(mode -> assertThat(plain.modeRefusal(mode)).isEmpty());
	}

	@Test
	void aNewLeaseIsOnTheReplicaWhenTheAcquisitionReturns() {
		RedisLockService service = service(1);
		for (int i = 0; i < 20; i++) {
			String key = "replicated-" + i;
			Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
			// read from the replica at once: no waiting for replication here
			assertThat(replica.execute("HEXISTS", service.redisKey(key), lease.owner())).as("lease %d on the replica", i)
				.isEqualTo(1L);
			lease.release();
		}
	}

	@Test
	void aLeaseTooFewReplicasAcknowledgedIsDeletedAndTheAcquisitionFailsSayingWhy() {
		RedisLockService service = service(1);
		replica.pause();
		long start = System.nanoTime();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("unreplicated", LONG_TTL, Duration.ZERO))
			.withMessageContaining("'unreplicated'")
			.withMessageContaining("only 0 of 1 replica(s) acknowledged")
			.withMessageContaining("distlock.replica-acks")
			.withMessageContaining("deleted again")
			.withMessageNotContaining("did not answer");
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(ACK_TIMEOUT.toMillis());
		assertThat(master.execute("EXISTS", service.redisKey("unreplicated"))).as("the lease left on the master").isEqualTo(0L);
		assertThat(service.activeLeases()).isEmpty();
	}

	@Test
	void aWaitRidesThroughAReplicaThatAcknowledgesLate() throws Exception {
		RedisLockService service = service(1);
		replica.pause();
		// the fault ends while the acquisition retries within its wait
		CompletableFuture<Void> resumed = CompletableFuture.runAsync(replica::resume,
				CompletableFuture.delayedExecutor(3 * ACK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
		Lease lease = service.acquire("late", LONG_TTL, Duration.ofSeconds(20));
		resumed.get(10, TimeUnit.SECONDS);
		assertThat(replica.execute("HEXISTS", service.redisKey("late"), lease.owner())).isEqualTo(1L);
		assertThat(lease.isOwned()).isTrue();
		lease.release();
	}

	@Test
	void moreAcknowledgementsThanReplicasFailEveryAcquisitionClearly() {
		RedisLockService service = service(2);
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("greedy", LONG_TTL, Duration.ZERO))
			.withMessageContaining("only 1 of 2 replica(s) acknowledged");
		assertThat(master.execute("EXISTS", service.redisKey("greedy"))).isEqualTo(0L);
	}

	@Test
	void waitersGetTheLockThroughTheScriptAndTheAcknowledgementNotByHandOver() throws Exception {
		RedisLockService service = service(1);
		Lease held = service.acquire("contended", LONG_TTL, Duration.ZERO);
		CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
				() -> service.acquire(LockRequest.of("contended", LONG_TTL, Duration.ofSeconds(20))),
				(task) -> new Thread(task, "waiter").start());
		await().atMost(Duration.ofSeconds(10)).until(() -> service.waitingThreads() == 1);
		held.release();
		Lease next = waiter.get(20, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
		assertThat(replica.execute("HEXISTS", service.redisKey("contended"), next.owner())).isEqualTo(1L);
		next.release();
	}

	@Test
	void onJedisToo() {
		try (LockTestSupport jedis = LockTestSupport.jedis(master)) {
			RedisLockService service = jedis.service(RedisLockService.builder(jedis.connectionFactory()).replicaAcks(1, ACK_TIMEOUT));
			Lease lease = service.acquire("on-jedis", LONG_TTL, Duration.ZERO);
			assertThat(replica.execute("HEXISTS", service.redisKey("on-jedis"), lease.owner())).isEqualTo(1L);
			lease.release();
			replica.pause();
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("on-jedis", LONG_TTL, Duration.ZERO))
				.withMessageContaining("only 0 of 1 replica(s) acknowledged");
			assertThat(master.execute("EXISTS", service.redisKey("on-jedis"))).isEqualTo(0L);
		}
	}

	@Test
	void badSettingsAreRejectedNamingThem() {
		RedisLockServiceBuilder builder = RedisLockService.builder(this.support.connectionFactory());
		assertThatIllegalArgumentException().isThrownBy(() -> builder.replicaAcks(-1, ACK_TIMEOUT))
			.withMessageContaining("'replicas'");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.replicaAcks(1, Duration.ZERO))
			.withMessageContaining("'timeout'");
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=" + master.port(), "distlock.replica-acks=-1")
			.run(context -> assertThat(context).hasFailed()
				.getFailure().rootCause().hasMessageContaining("distlock.replica-acks"));
	}

	@Test
	void thePropertiesTurnItOn() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + RedisServer.HOST, "spring.data.redis.port=" + master.port(),
					"spring.data.redis.timeout=2s", "distlock.replica-acks=1", "distlock.replica-ack-timeout=300ms")
			.run(context -> {
				LockService locks = context.getBean(LockService.class);
				replica.pause();
				try {
					assertThatExceptionOfType(LockUnavailableException.class)
						.isThrownBy(() -> locks.tryAcquire("configured", LONG_TTL, Duration.ZERO))
						.withMessageContaining("only 0 of 1 replica(s) acknowledged the new lease of 'configured' within 300ms");
				}
				finally {
					replica.resume();
				}
				try (Lease lease = locks.acquire("configured", LONG_TTL, Duration.ofSeconds(5))) {
					assertThat(replica.execute("HEXISTS", "lock:{configured}", lease.owner())).isEqualTo(1L);
				}
			});
	}

	@Test
	void onAJedisClusterTheServiceRefusesToStart() {
		JedisConnectionFactory clusterFactory = new JedisConnectionFactory(
				new RedisClusterConfiguration(List.of(RedisServer.HOST + ":" + master.port())));
		assertThatIllegalStateException()
			.isThrownBy(() -> RedisLockService.builder(clusterFactory).replicaAcks(1, ACK_TIMEOUT).build())
			.withMessageContaining("not supported on Redis Cluster through Jedis")
			.withMessageContaining("distlock.replica-acks=1");
	}

}
