package dev.distlock.autoconfigure;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockService;
import dev.distlock.redis.RedisLockService;
import dev.distlock.redis.RedisLockServiceBuilder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configures the Redis engine, a {@link RedisLockService} on the application's {@link RedisConnectionFactory},
 * unless the application defines a {@link LockService} of its own. Only the engine lives here: the
 * {@code @DistributedLock} support ({@link DistributedLockAutoConfiguration}) needs a {@code LockService}, not Redis.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnLocksEnabled
@EnableConfigurationProperties(LockProperties.class)
@Import(DeprecatedLockProperties.Registrar.class)
public final class RedisLockServiceAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public RedisLockServiceAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean(LockService.class)
	@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
	RedisLockService lockService(RedisConnectionFactory connectionFactory, LockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LockListener> listeners, Environment environment,
			ObjectProvider<RedisLockServiceBuilderCustomizer> customizers) {
		RedisLockServiceBuilder builder = RedisLockService.builder(connectionFactory)
			.keyPrefix(properties.getKeyPrefix())
			.renewalRatio(properties.getRenewalRatio())
			.idleUnsubscribe(properties.getIdleUnsubscribe())
			.localHandOvers(properties.getLocalHandOvers())
			.fairEntryTtl(properties.getFairEntryTtl())
			.replicaAcks(properties.getReplicaAcks(), properties.getReplicaAckTimeout())
			.holderApplication(properties.getHolder().applicationOrDefault(environment))
			.holderInstance(properties.getHolder().instanceOrDefault())
			.storeHolderLabel(properties.getHolder().isStoreLabel())
			.eventPublisher(eventPublisher);
		listeners.orderedStream().forEach(builder::listener);
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		if (Threading.VIRTUAL.isActive(environment)) {
			// spring.threads.virtual.enabled: the engine's threads are virtual too, named by their role as ever
			builder.threadFactory(new VirtualThreadTaskExecutor("distlock-").getVirtualThreadFactory());
		}
		return builder.build();
	}

}
