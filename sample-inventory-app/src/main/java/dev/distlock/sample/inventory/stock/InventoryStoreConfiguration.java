package dev.distlock.sample.inventory.stock;

import java.net.URI;

import dev.distlock.sample.inventory.InventoryProperties;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The store on the application's Redis (the one the locks use), or on its own server when
 * {@code inventory.store.redis-url} is set. The separate connection is deliberately not a {@code RedisConnectionFactory}
 * bean: a second one would make the choice of the lock's and Spring Data's connection ambiguous.
 */
@Configuration(proxyBeanMethods = false)
class InventoryStoreConfiguration {

	@Bean
	InventoryStore inventoryStore(InventoryProperties properties, StringRedisTemplate stringRedisTemplate,
			ObjectProvider<SeparateStoreRedis> separate, JsonMapper jsonMapper) {
		SeparateStoreRedis own = separate.getIfAvailable();
		StringRedisTemplate redis = (own != null) ? own.template() : stringRedisTemplate;
		return new InventoryStore(redis, properties.store().keyPrefix(), jsonMapper);
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnProperty("inventory.store.redis-url")
	SeparateStoreRedis separateStoreRedis(InventoryProperties properties) {
		URI url = properties.store().redisUrl();
		if (url == null) {
			throw new IllegalStateException("inventory.store.redis-url is set but empty");
		}
		return SeparateStoreRedis.connect(url);
	}

	/** A connection of the store's own, closed with the context. */
	static final class SeparateStoreRedis implements AutoCloseable {

		private final LettuceConnectionFactory connectionFactory;

		private final StringRedisTemplate template;

		private SeparateStoreRedis(LettuceConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
			this.template = new StringRedisTemplate(connectionFactory);
		}

		static SeparateStoreRedis connect(URI url) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					LettuceConnectionFactory.createRedisConfiguration(url.toString()));
			factory.afterPropertiesSet();
			factory.start();
			return new SeparateStoreRedis(factory);
		}

		StringRedisTemplate template() {
			return this.template;
		}

		@Override
		public void close() {
			this.connectionFactory.destroy();
		}

	}

}
