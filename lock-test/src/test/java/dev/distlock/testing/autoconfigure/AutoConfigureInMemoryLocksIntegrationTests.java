package dev.distlock.testing.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;

import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockService;
import dev.distlock.observability.LockMetrics;
import dev.distlock.preflight.LockPreflightRunner;
import dev.distlock.redis.RedisLockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.LockScenarios;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static dev.distlock.testing.LockAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A whole Spring Boot application (every auto-configuration on this module's test class path: Boot's Redis, Actuator,
 * Micrometer, the starter) with {@code @AutoConfigureInMemoryLocks}: the {@code @DistributedLock} method answers busy
 * while another instance holds its key, ends with a lost lease when the lease is lost mid-call, and locks normally
 * otherwise, with the meters and the health on the in-memory engine. Redis is configured to a port where this test
 * listens, and nothing ever connects to it: the starter does not touch Redis in this mode.
 */
@SpringBootTest(classes = AutoConfigureInMemoryLocksIntegrationTests.TinyApplication.class,
		properties = "management.endpoint.health.show-details=always")
@AutoConfigureInMemoryLocks
class AutoConfigureInMemoryLocksIntegrationTests {

	private static final String KEY = "stock:sku-1";

	/** Where Boot's Redis connection factory would connect: a socket that counts who does. */
	private static final ServerSocket NOT_REDIS = listen();

	@Autowired
	ApplicationContext context;

	@Autowired
	Stock stock;

	@Autowired
	LockScenarios locks;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", NOT_REDIS::getLocalPort);
	}

	@Test
	void aCallAnswersBusyWhileAnotherInstanceHoldsItsKey() {
		this.locks.holdElsewhere(KEY);

		assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> this.stock.sell("sku-1"))
			.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo(KEY));

		assertThat(this.locks).wasBusy(KEY).neverLocked(KEY).waitedAtMost(KEY, Duration.ofSeconds(5));
	}

	@Test
	void eachTestStartsAfreshSoTheSameKeyCanBeHeldElsewhereAgain() {
		assertThat(this.locks.history().entries()).isEmpty();
		this.locks.holdElsewhere(KEY);
		assertThat(this.context.getBean(InMemoryLockService.class).isLocked(KEY)).isTrue();
	}

	@Test
	void aCallWhoseLeaseIsLostMidwayEndsWithALostLease() {
		this.stock.beforeNextWrite(() -> this.locks.loseNow(KEY));

		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> this.stock.sell("sku-1"))
			.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo(KEY));

		assertThat(this.locks).acquired(KEY).times(1).lost(KEY).releasedEverything();
	}

	@Test
	void aCallLocksItsKeyOnceWithTheStartersMetersAndHealthOnTheInMemoryEngine() {
		int sold = this.stock.sell("sku-2");

		assertThat(sold).isPositive();
		assertThat(this.locks).acquired("stock:sku-2").times(1).releasedEverything();
		assertThat(this.locks.lockedKeys()).containsExactly("stock:sku-2");
		assertThat(this.context.getBean(MeterRegistry.class).get(LockMetrics.ACQUIRE).tag("outcome", "acquired")
			.timer().count()).isPositive();
		assertThat(this.context.getBean(LocksHealthIndicator.class).health().getDetails())
			.containsEntry("engine", "in-memory (single instance only)");
	}

	@Test
	void theEngineIsTheInMemoryOneAndRedisIsNeverUsed() {
		assertThat(this.context.getBeansOfType(InMemoryLockService.class)).hasSize(1);
		assertThat(this.context.getBeanProvider(LockService.class).getObject())
			.as("the observed wrapper of the in-memory engine, or the engine itself")
			.satisfiesAnyOf((service) -> assertThat(service).isInstanceOf(InMemoryLockService.class),
					(service) -> assertThat(service.getClass().getSimpleName()).isEqualTo("ObservedLockService"));
		assertThat(this.context.getBeansOfType(RedisLockService.class)).isEmpty();
		assertThat(this.context.getBeansOfType(LockPreflightRunner.class)).as("no preflight: no Redis engine").isEmpty();
		assertThat(this.context.getBeansOfType(RedisConnectionFactory.class))
			.as("Boot's factory exists (the application may use Redis itself), and connects only on use").hasSize(1);
	}

	@AfterEach
	void nobodyConnectedToRedis() throws IOException {
		NOT_REDIS.setSoTimeout(1);
		try {
			NOT_REDIS.accept().close();
			throw new AssertionError("Something connected to the configured Redis while the locks run in memory");
		}
		catch (SocketTimeoutException expected) {
			// nobody came
		}
	}

	@AfterAll
	static void close() throws IOException {
		NOT_REDIS.close();
	}

	private static ServerSocket listen() {
		try {
			return new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TinyApplication {

		@Bean
		Stock stock() {
			return new Stock();
		}

	}

}
