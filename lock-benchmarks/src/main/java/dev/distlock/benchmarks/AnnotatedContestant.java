package dev.distlock.benchmarks;

import java.util.EnumSet;
import java.util.Set;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.redis.RedisLockService;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * This starter as an application uses it: a Spring Boot context (no web) with the auto-configuration, and a bean whose
 * {@code @DistributedLock} method runs the benchmark's critical section. Each client is its own context, with its own
 * connection factory and lock service, as a separate application instance would have.
 */
final class AnnotatedContestant implements Contestant {

	@Override
	public String name() {
		return "distlock @DistributedLock";
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public Set<Scenario> scenarios() {
		return EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY, Scenario.HOT_KEY_8X1, Scenario.MANY_KEYS, Scenario.MEMORY);
	}

	@Override
	public Client open(Target target, Options options) {
		if (!options.ttl().equals(Settings.LEASE) || !options.waitTime().equals(Settings.WAIT)) {
			throw new IllegalArgumentException("The annotated bean locks with ttl 30s and waitTime 5s, not " + options);
		}
		ConfigurableApplicationContext context = new SpringApplicationBuilder(Config.class)
			.web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.properties("spring.data.redis.host=" + target.host(), "spring.data.redis.port=" + target.port(),
					"distlock.key-prefix=bench-annotated")
			.run();
		return new AnnotatedClient(context, context.getBean(LockedWork.class));
	}

	private record AnnotatedClient(ConfigurableApplicationContext context, LockedWork work) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			try {
				this.work.run(key, criticalSection);
				return true;
			}
			catch (LockAcquisitionTimeoutException ex) {
				return false;
			}
		}

		@Override
		public long heldOrWaiting() {
			return DistlockContestant.heldOrWaitingIn(this.context.getBean(RedisLockService.class));
		}

		@Override
		public void close() {
			this.context.close();
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Config {

		@Bean
		LockedWork lockedWork() {
			return new LockedWork();
		}

	}

	/** The annotated bean: its method body is the benchmark's critical section. */
	static class LockedWork {

		@DistributedLock(key = "#key", ttl = "30s", waitTime = "5s")
		public void run(String key, Runnable criticalSection) {
			criticalSection.run();
		}

	}

}
