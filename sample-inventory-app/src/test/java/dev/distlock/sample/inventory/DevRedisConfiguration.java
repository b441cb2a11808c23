package dev.distlock.sample.inventory;

import java.util.List;

import dev.distlock.test.redis.RedisServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Profile;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * A private {@code redis-server} for running the sample on a machine without Redis ({@link TestInventoryApplication}):
 * on a free loopback port, the one on PATH or else the binary shipped in the embedded-redis jar, stopped with the
 * application. It never uses a server that is already running, so a Redis on 6379 is left alone. A dev convenience, so
 * it lives with the tests: the application itself connects where {@code spring.data.redis.*} says, like any other.
 * <p>
 * It backs off when a Redis address is configured, and under the {@link ContainersConfig#PROFILE container} and
 * {@link InMemoryDevConfiguration#PROFILE in-memory} profiles.
 * Both are conditions, not left to the choice of launcher, because under {@code spring-boot:test-run} the
 * application's component scan sees the test classes, this one and {@link ContainersConfig} included.
 */
@TestConfiguration(proxyBeanMethods = false)
@Profile("!" + ContainersConfig.PROFILE + " & !" + InMemoryDevConfiguration.PROFILE)
@Conditional(DevRedisConfiguration.NoRedisAddressCondition.class)
public class DevRedisConfiguration {

	private static final Log logger = LogFactory.getLog(DevRedisConfiguration.class);

	@Bean(destroyMethod = "close")
	RedisServer devRedisServer() {
		RedisServer server = RedisServer.start();
		logger.info("Started " + server + " for this application; it stops with it. Set spring.data.redis.host "
				+ "(or url) to use another Redis");
		return server;
	}

	/** Ahead of Boot's own connection details, which back off for it. */
	@Bean
	DataRedisConnectionDetails devRedisConnectionDetails(RedisServer devRedisServer) {
		DataRedisConnectionDetails.Standalone standalone = DataRedisConnectionDetails.Standalone
			.of(devRedisServer.host(), devRedisServer.port());
		return new DataRedisConnectionDetails() {

			@Override
			public Standalone getStandalone() {
				return standalone;
			}

		};
	}

	/** Matches when no Redis address is configured under {@code spring.data.redis}. */
	static class NoRedisAddressCondition extends SpringBootCondition {

		/** Any of these means the user chose a Redis. */
		private static final List<String> ADDRESS_PROPERTIES = List.of("spring.data.redis.url", "spring.data.redis.host",
				"spring.data.redis.port", "spring.data.redis.sentinel.master", "spring.data.redis.sentinel.nodes",
				"spring.data.redis.cluster.nodes", "spring.data.redis.masterreplica.nodes");

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			Binder binder = Binder.get(context.getEnvironment());
			for (String name : ADDRESS_PROPERTIES) {
				if (binder.bind(name, Bindable.of(String.class)).isBound()
						|| binder.bind(name, Bindable.listOf(String.class)).isBound()) {
					return ConditionOutcome.noMatch(name + " is set");
				}
			}
			return ConditionOutcome.match("no Redis address is configured");
		}

	}

}
