package dev.distlock.sample.inventory.redis;

import dev.distlock.test.redis.RedisServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * Starts a private {@code redis-server} on a free loopback port when no Redis address is configured, and points
 * Spring Data Redis (and so the locks and the store) at it. It never uses a server that is already running, so a
 * Redis on 6379 is left alone; the server stops when the application context closes.
 * <p>
 * An auto-configuration rather than a plain {@code @Configuration}, so that it runs after Testcontainers'
 * {@code @ServiceConnection} beans are known (and backs off for them) and before {@link DataRedisAutoConfiguration}
 * creates its connection details from the properties.
 */
@AutoConfiguration(before = DataRedisAutoConfiguration.class,
		afterName = "org.springframework.boot.testcontainers.service.connection.ServiceConnectionAutoConfiguration")
@ConditionalOnMissingBean(DataRedisConnectionDetails.class)
@Conditional(OnEmbeddedRedisCondition.class)
public final class EmbeddedRedisAutoConfiguration {

	private static final Log logger = LogFactory.getLog(EmbeddedRedisAutoConfiguration.class);

	@Bean(destroyMethod = "close")
	RedisServer embeddedRedisServer() {
		RedisServer server = RedisServer.start();
		logger.info("Started " + server + " for this application; it stops with it. Set spring.data.redis.host "
				+ "(or url) to use another Redis");
		return server;
	}

	@Bean
	DataRedisConnectionDetails embeddedRedisConnectionDetails(RedisServer embeddedRedisServer) {
		DataRedisConnectionDetails.Standalone standalone = DataRedisConnectionDetails.Standalone
			.of(embeddedRedisServer.host(), embeddedRedisServer.port());
		return new DataRedisConnectionDetails() {

			@Override
			public Standalone getStandalone() {
				return standalone;
			}

		};
	}

}
