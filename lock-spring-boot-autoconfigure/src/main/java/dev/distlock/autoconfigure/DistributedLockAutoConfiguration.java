package dev.distlock.autoconfigure;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.interceptor.DistributedLockInterceptor;
import dev.distlock.interceptor.LockOperationSource;
import dev.distlock.observability.LockAcquisitionObservationConvention;
import dev.distlock.observability.LockCallObservationConvention;
import dev.distlock.redis.RedisLockService;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.function.SingletonSupplier;

/**
 * Auto-configures a {@link RedisLockService} on the application's {@link RedisConnectionFactory} and the
 * {@link dev.distlock.annotation.DistributedLock @DistributedLock} interceptor. Every bean backs off when the
 * application defines its own; {@code lock.enabled=false} turns it all off.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockProperties.class)
public final class DistributedLockAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public DistributedLockAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean(LockService.class)
	@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
	RedisLockService lockService(RedisConnectionFactory connectionFactory, LockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LockListener> listeners) {
		RedisLockService.Builder builder = RedisLockService.builder(connectionFactory)
			.keyPrefix(properties.getKeyPrefix())
			.renewalRatio(properties.getRenewalRatio())
			.idleUnsubscribe(properties.getIdleUnsubscribe())
			.localHandOvers(properties.getLocalHandOvers())
			.eventPublisher(eventPublisher);
		listeners.orderedStream().forEach(builder::listener);
		return builder.build();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.aop.framework.ProxyFactory")
	static class InterceptorConfiguration {

		/**
		 * Static and with lazy dependencies, as a bean post-processor must be: it is created before the beans it
		 * advises, and must not pull the lock service (and Redis) into existence early.
		 */
		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		@ConditionalOnMissingBean
		static DistributedLockBeanPostProcessor distributedLockBeanPostProcessor(Environment environment,
				ConfigurableListableBeanFactory beanFactory, ObjectProvider<LockService> lockService,
				ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<LockAcquisitionObservationConvention> acquisitionConvention,
				ObjectProvider<LockCallObservationConvention> callConvention) {
			LockProperties properties = Binder.get(environment).bindOrCreate("lock", LockProperties.class);
			LockOperationSource operationSource = new LockOperationSource(beanFactory, new EmbeddedValueResolver(beanFactory),
					properties.getDefaultTtl(), properties.getDefaultWaitTime());
			DistributedLockInterceptor interceptor = new DistributedLockInterceptor(operationSource, lockService::getObject,
					beanFactory, properties.getOnLostLease());
			// looked up on the first call, when the registry (and its handlers) are ready, not while post-processors are made
			interceptor.setObservationRegistry(SingletonSupplier.of(() -> {
				acquisitionConvention.ifAvailable(interceptor::setAcquisitionObservationConvention);
				callConvention.ifAvailable(interceptor::setCallObservationConvention);
				return observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP);
			}));
			return new DistributedLockBeanPostProcessor(operationSource, interceptor, properties.getAdviceOrder());
		}

	}

}
