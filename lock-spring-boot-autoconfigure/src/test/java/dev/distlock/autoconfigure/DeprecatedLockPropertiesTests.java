package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.interceptor.LostLeasePolicy;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.env.OriginTrackedMapPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginTrackedValue;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** The lock.* properties of earlier versions keep working for one release, as their distlock.* successors. */
@ExtendWith({ RedisServerExtension.class, OutputCaptureExtension.class })
class DeprecatedLockPropertiesTests {

	private static final String WARNING = "The lock.* properties are deprecated";

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@Test
	void oldPropertiesStillTakeEffectEverywhereAndOneWarningNamesEachWithItsNewName(CapturedOutput output) {
		runner().withPropertyValues("lock.key-prefix=legacy", "lock.default-wait-time=750ms", "lock.on-lost-lease=warn")
			.withBean(Requests.class)
			.withBean(Ledger.class)
			.run(context -> {
				LockProperties properties = context.getBean(LockProperties.class);
				assertThat(properties.getKeyPrefix()).isEqualTo("legacy");
				assertThat(properties.getDefaultWaitTime()).isEqualTo(Duration.ofMillis(750));
				assertThat(properties.getOnLostLease()).isEqualTo(LostLeasePolicy.WARN);
				// the engine
				RedisLockService service = context.getBean(RedisLockService.class);
				try (Lease lease = service.acquire("k", Duration.ofSeconds(5), Duration.ZERO)) {
					assertThat(redis.execute("EXISTS", "legacy:{k}")).isEqualTo(1L);
				}
				// the interceptor, made before the LockProperties bean: its default wait is the old property's
				context.getBean(Ledger.class).post("acct-1");
				assertThat(context.getBean(Requests.class).waits()).containsExactly(Duration.ofMillis(750));
				// placeholders
				assertThat(context.getEnvironment().getProperty("distlock.key-prefix")).isEqualTo("legacy");
			});
		assertThat(output).containsOnlyOnce(WARNING)
			.contains("lock.key-prefix to distlock.key-prefix")
			.contains("lock.default-wait-time to distlock.default-wait-time")
			.contains("lock.on-lost-lease to distlock.on-lost-lease");
	}

	@Test
	void theNewNameWinsWhenBothAreSet(CapturedOutput output) {
		runner().withPropertyValues("lock.key-prefix=legacy", "distlock.key-prefix=current", "lock.default-ttl=45s")
			.run(context -> {
				LockProperties properties = context.getBean(LockProperties.class);
				assertThat(properties.getKeyPrefix()).isEqualTo("current");
				assertThat(properties.getDefaultTtl()).as("an old name without a new one still counts")
					.isEqualTo(Duration.ofSeconds(45));
				assertThat(context.getBean(RedisLockService.class).redisKey("k")).isEqualTo("current:{k}");
			});
		assertThat(output).containsOnlyOnce(WARNING)
			.contains("lock.default-ttl to distlock.default-ttl")
			.contains("Ignored: lock.key-prefix")
			.contains("as distlock.key-prefix is set");
	}

	@Test
	void theOldEnabledStillTurnsLocksOffUnlessTheNewNameSaysOtherwise() {
		runner().withPropertyValues("lock.enabled=false")
			.run(context -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockService.class)
				.doesNotHaveBean(DistributedLockBeanPostProcessor.class));
		runner().withPropertyValues("lock.enabled=false", "distlock.enabled=true")
			.run(context -> assertThat(context).hasSingleBean(LockService.class)
				.hasSingleBean(DistributedLockBeanPostProcessor.class));
		runner().withPropertyValues("lock.enabled=true", "distlock.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(LockService.class));
	}

	@Test
	void withNewNamesOnlyNothingIsLogged(CapturedOutput output) {
		runner().withPropertyValues("distlock.key-prefix=current")
			.run(context -> assertThat(context.getBean(LockProperties.class).getKeyPrefix()).isEqualTo("current"));
		assertThat(output).doesNotContain(WARNING);
	}

	@Test
	void anInvalidOldValueFailsTheStartPointingAtWhereItIsSet() {
		Origin origin = new Origin() {
			@Override
			public String toString() {
				return "application.properties - 3:19";
			}
		};
		runner().withInitializer(context -> context.getEnvironment()
			.getPropertySources()
			.addFirst(new OriginTrackedMapPropertySource("application",
					Map.of("lock.default-ttl", OriginTrackedValue.of("0s", origin)))))
			.run(context -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("distlock.default-ttl");
				Throwable failure = context.getStartupFailure();
				while (!(failure instanceof BindException) && failure.getCause() != null) {
					failure = failure.getCause();
				}
				assertThat(failure).isInstanceOf(BindException.class);
				// what Boot's failure report shows as the origin of the bad value: where the old property is set
				assertThat(((BindException) failure).getProperty().getName()).hasToString("distlock.default-ttl");
				assertThat(((BindException) failure).getProperty().getOrigin()).asString().contains(origin.toString());
			});
	}

	/** Records the wait of every acquisition of a ledger key. */
	static class Requests implements LockListener {

		private final List<Duration> waits = new CopyOnWriteArrayList<>();

		@Override
		public void acquired(LockRequest request, Lease lease, Duration waited) {
			if (request.key().startsWith("ledger:")) {
				this.waits.add(request.waitTime());
			}
		}

		List<Duration> waits() {
			return this.waits;
		}

	}

	public static class Ledger {

		@DistributedLock(key = "'ledger:' + #account")
		public void post(String account) {
		}

	}

}
