package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import dev.distlock.redis.LockTestSupport;
import dev.distlock.redis.RedisLockService;
import dev.distlock.redis.RedlockLockService;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code distlock.redlock.nodes} makes the Redlock engine the application's lock service, and {@code @DistributedLock}
 * works on it unchanged; a bad node list fails the start with the property named.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockAutoConfigurationIntegrationTests {

	private static final List<RedisServer> servers = new ArrayList<>();

	@BeforeAll
	static void start() {
		for (int i = 0; i < 3; i++) {
			servers.add(RedisServer.start());
		}
	}

	@AfterAll
	static void stop() {
		servers.forEach(RedisServer::close);
	}

	private static String nodes(List<RedisServer> list) {
		return String.join(",", list.stream().map(s -> "redis://" + s.host() + ":" + s.port()).toList());
	}

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
				RedlockLockServiceAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
				DistributedLockAutoConfiguration.class))
		.withBean(Counter.class);

	@Test
	void theNodesMakeRedlockTheLockServiceAndTheAnnotationLocksOnIt() throws Exception {
		this.runner.withPropertyValues("distlock.redlock.nodes=" + nodes(servers), "distlock.redlock.node-timeout=250ms",
				"distlock.redlock.restart-quarantine=1s")
			.run(context -> {
				assertThat(context).hasSingleBean(LockService.class).doesNotHaveBean(RedisLockService.class);
				RedlockLockService engine = context.getBean(RedlockLockService.class);
				assertThat(engine.nodeCount()).isEqualTo(3);
				assertThat(context).getBean(LockOperatorView.class).isSameAs(engine);
				Counter counter = context.getBean(Counter.class);
				ExecutorService pool = Executors.newFixedThreadPool(4);
				try {
					List<Future<?>> calls = new ArrayList<>();
					for (int t = 0; t < 4; t++) {
						calls.add(pool.submit(() -> {
							for (int i = 0; i < 10; i++) {
								counter.increment();
							}
							return null;
						}));
					}
					for (Future<?> call : calls) {
						call.get(60, TimeUnit.SECONDS);
					}
				}
				finally {
					pool.shutdownNow();
				}
				assertThat(counter.value()).isEqualTo(40);
				assertThat(counter.tokens()).isSorted().doesNotHaveDuplicates();
				// the lease was on a quorum of the nodes while the method ran, under one owner
				assertThat(counter.keysSeen()).isGreaterThanOrEqualTo(2);
				// and nothing is left once the releases (and discards of failed attempts) still on their way have run:
				// whatever a late grant left expires at its 5 s lease time at the latest; the rest of the bound is for a
				// loaded machine (5 s was not enough once, beside two CPU hogs, issue 32)
				await().atMost(Duration.ofSeconds(15))
					.untilAsserted(() -> assertThat(servers)
						.allSatisfy(server -> assertThat(LockTestSupport.leftKeys(server, "lock:*"))
							.as("keys left on %s", server)
							.isEmpty()));
			});
	}

	@Test
	void theEngineAndItsNodeClientsStopWithTheContext() {
		RedlockLockService[] engine = new RedlockLockService[1];
		this.runner.withPropertyValues("distlock.redlock.nodes[0]=" + servers.get(0).uri(),
				"distlock.redlock.nodes[1]=" + servers.get(1).uri(), "distlock.redlock.nodes[2]=" + servers.get(2).uri(),
				"distlock.holder.application=inventory", "distlock.holder.instance=pod-7")
			.run(context -> {
				engine[0] = context.getBean(RedlockLockService.class);
				assertThat(engine[0].isRunning()).isTrue();
				// the holder label of its leases (issue 29)
				try (Lease lease = engine[0].acquire("labelled", Duration.ofSeconds(10), Duration.ofSeconds(5))) {
					assertThat(lease.holder())
						.hasToString("inventory@pod-7 thread \"" + Thread.currentThread().getName() + "\"");
				}
			});
		assertThat(engine[0].isRunning()).isFalse();
	}

	@Test
	void withoutNodesTheSingleServerEngineStays() {
		this.runner.withPropertyValues("spring.data.redis.port=" + servers.get(0).port())
			.run(context -> assertThat(context).hasSingleBean(RedisLockService.class)
				.doesNotHaveBean(RedlockLockService.class));
	}

	@Test
	void anEvenNumberOfNodesFailsTheStart() {
		this.runner.withPropertyValues("distlock.redlock.nodes=" + nodes(servers.subList(0, 2)))
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("odd number of at least 3"));
	}

	@Test
	void aNodeThatIsNotARedisUrlFailsTheStartNamingIt() {
		this.runner.withPropertyValues("distlock.redlock.nodes=" + servers.get(0).uri() + ",localhost:6380,"
				+ servers.get(2).uri())
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("distlock.redlock.nodes[1]"));
	}

	@Test
	void aDeclarationOfPermitsFailsTheStartNamingTheMethodAndRedlocksReason() {
		this.runner.withPropertyValues("distlock.redlock.nodes=" + nodes(servers), "distlock.redlock.node-timeout=250ms")
			.withBean(PartnerApi.class)
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidLockDeclarationException.class)
				.hasMessageContaining("PartnerApi.call()")
				.hasMessageContaining("asks for permits, which the lock service refuses")
				.hasMessageContaining("does not bound the holders by the number of permits"));
	}

	@Test
	void aFairDeclarationFailsTheStartOnRedlock() {
		this.runner.withPropertyValues("distlock.redlock.nodes=" + nodes(servers), "distlock.redlock.node-timeout=250ms")
			.withBean(FairJob.class)
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidLockDeclarationException.class)
				.hasMessageContaining("FairJob.run()")
				.hasMessageContaining("asks for a fair lock, which the lock service refuses: the "
						+ "Redlock engine takes exclusive locks only"));
	}

	/** A semaphore's declaration, which Redlock refuses. */
	public static class PartnerApi {

		@DistributedLock(key = "'partner-api'", permits = 2)
		public void call() {
		}

	}

	/** A fair lock's declaration, which Redlock refuses. */
	public static class FairJob {

		@DistributedLock(key = "'job'", fair = true)
		public void run() {
		}

	}

	/** A deliberately non-atomic increment under the annotation. */
	public static class Counter {

		volatile int value;

		volatile int keysSeen;

		final List<Long> tokens = new ArrayList<>();

		public int value() {
			return this.value;
		}

		public int keysSeen() {
			return this.keysSeen;
		}

		public List<Long> tokens() {
			synchronized (this.tokens) {
				return new ArrayList<>(this.tokens);
			}
		}

		@DistributedLock(key = "'counter'", ttl = "5s", waitTime = "60s")
		public void increment() {
			Lease lease = LockContext.current().orElseThrow();
			int read = this.value;
			Thread.yield();
			this.value = read + 1;
			synchronized (this.tokens) {
				this.tokens.add(lease.fencingToken());
			}
			int seen = 0;
			for (RedisServer server : servers) {
				if (server.execute("HGET", "lock:{counter}", lease.owner()) != null) {
					seen++;
				}
			}
			this.keysSeen = seen;
		}

	}

}
