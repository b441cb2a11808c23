package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.EnableDistributedLocks;
import dev.distlock.annotation.LockContext;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.test.redis.ConcurrentCalls;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library without Spring Boot, as a plain Spring application uses it: {@code lock-core} and {@code lock-redis} on
 * the class path and no Boot at all (this module's test class path has none, which the first test checks), an
 * {@link AnnotationConfigApplicationContext} with {@link EnableDistributedLocks @EnableDistributedLocks}, a
 * {@link LettuceConnectionFactory} and a {@link RedisLockService} from its builder, against a private
 * {@code redis-server} on a free port ({@link RedisServerExtension}).
 */
@ExtendWith(RedisServerExtension.class)
class PlainSpringRedisLockIntegrationTests {

	private static final String KEY = "plain:{order-1}";

	private RedisServer redis;

	private AnnotationConfigApplicationContext context;

	@BeforeEach
	void start(RedisServer server) {
		this.redis = server;
		server.execute("FLUSHALL");
		this.context = new AnnotationConfigApplicationContext();
		this.context.registerBean(Endpoint.class, () -> new Endpoint(server.host(), server.port()));
		this.context.register(PlainSpringConfiguration.class);
		this.context.refresh();
	}

	@AfterEach
	void close() {
		this.context.close();
	}

	@Test
	void springBootIsNotOnTheClassPath() {
		assertThat(ClassUtils.isPresent("org.springframework.boot.SpringApplication", null)).isFalse();
		assertThat(ClassUtils.isPresent("org.springframework.boot.autoconfigure.AutoConfiguration", null)).isFalse();
		assertThat(this.context.getBeansOfType(DistributedLockBeanPostProcessor.class)).hasSize(1);
	}

	@Test
	void aLockedMethodRunsUnderTheLockInRedisAndReleasesItAfterwards() throws Exception {
		Orders orders = this.context.getBean(Orders.class);
		assertThat(AopUtils.isAopProxy(orders)).isTrue();

		Observed observed = orders.ship("order-1", () -> new Observed(LockContext.current().isPresent(),
				this.redis.execute("EXISTS", KEY), this.redis.execute("HGETALL", KEY)));

		assertThat(observed.leaseInContext()).isTrue();
		assertThat(observed.exists()).as("the lease hash %s during the call", KEY).isEqualTo(1L);
		assertThat((List<?>) observed.lease()).isNotEmpty();
		assertThat(this.redis.execute("EXISTS", KEY)).as("after the call").isEqualTo(0L);
		assertThat(LockContext.current()).isEmpty();
	}

	@Test
	void twoThreadsNeverRunTheLockedMethodAtTheSameTime() throws Exception {
		Orders orders = this.context.getBean(Orders.class);
		AtomicInteger inside = new AtomicInteger();
		List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
		int[] counter = { 0 };

		int calls = ConcurrentCalls.run(2, 10, Duration.ofSeconds(60), (thread) -> orders.ship("order-1", () -> {
			seen.add(inside.incrementAndGet());
			int read = counter[0];
			Thread.sleep(20);
			counter[0] = read + 1;
			inside.decrementAndGet();
			return null;
		}));

		assertThat(calls).isEqualTo(20);
		assertThat(seen).hasSize(20).containsOnly(1);
		assertThat(counter[0]).as("no lost update").isEqualTo(20);
		assertThat(this.redis.execute("EXISTS", KEY)).isEqualTo(0L);
	}

	/** Where the test's redis-server listens: a free port of the loopback address, never 6379. */
	record Endpoint(String host, int port) {
	}

	/** What the locked method saw while it ran. */
	record Observed(boolean leaseInContext, Object exists, Object lease) {
	}

	/** Work done under the lock. */
	@FunctionalInterface
	public interface Work<T> {

		T run() throws Exception;

	}

	/** A bean with a locked method, proxied by {@code @EnableDistributedLocks}. */
	public static class Orders {

		@DistributedLock(key = "#orderId", ttl = "30s", waitTime = "30s")
		public <T> T ship(String orderId, Work<T> work) throws Exception {
			return work.run();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class PlainSpringConfiguration {

		@Bean
		LettuceConnectionFactory redisConnectionFactory(Endpoint endpoint) {
			return new LettuceConnectionFactory(new RedisStandaloneConfiguration(endpoint.host(), endpoint.port()));
		}

		@Bean
		RedisLockService lockService(LettuceConnectionFactory connectionFactory) {
			return RedisLockService.builder(connectionFactory).keyPrefix("plain").build();
		}

		@Bean
		Orders orders() {
			return new Orders();
		}

	}

}
