package dev.distlock.interceptor;

import java.time.Duration;

import dev.distlock.core.LockService;
import dev.distlock.observability.LockCallObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.util.function.SingletonSupplier;

/**
 * Proxy mode of {@link dev.distlock.annotation.EnableDistributedLocks @EnableDistributedLocks} without Spring Boot:
 * the advising bean post-processor that puts {@link DistributedLockInterceptor} in front of each bean with a locked
 * method, on the application's {@link LockService} bean, like Spring's {@code ProxyCachingConfiguration} does for
 * {@code @EnableCaching}. Imported through {@link ProxyDistributedLockSelector}, after every other configuration (Spring
 * Boot's auto-configurations included), and only when nothing has defined a {@link DistributedLockBeanPostProcessor}
 * by then: with the starter, the auto-configuration's one, which applies the {@code distlock.*} properties, wins. Here
 * the settings are the annotation's own and these defaults: the properties' defaults.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(ProxyDistributedLockSelector.NoDistributedLockPostProcessorYet.class)
final class ProxyDistributedLockConfiguration {

	/** The lease time of a method that declares none ({@code distlock.default-ttl}'s default). */
	static final Duration DEFAULT_TTL = Duration.ofSeconds(30);

	/** How long a method that declares no wait time waits ({@code distlock.default-wait-time}'s default). */
	static final Duration DEFAULT_WAIT_TIME = Duration.ofSeconds(5);

	/** First among a bean's advisors, so the lock wraps {@code @Transactional} ({@code distlock.advice-order}'s default). */
	static final int ADVICE_ORDER = Ordered.HIGHEST_PRECEDENCE;

	/** What a call whose lease was lost ends with ({@code distlock.on-lost-lease}'s default). */
	static final LostLeasePolicy ON_LOST_LEASE = LostLeasePolicy.THROW;

	/**
	 * Static and with lazy dependencies, as a bean post-processor must be: it is created before the beans it advises,
	 * and must not pull the lock service into existence early.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DistributedLockBeanPostProcessor distributedLockBeanPostProcessor(ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<LockService> lockService, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<LockCallObservationConvention> callConvention) {
		LockOperationSource operationSource = new LockOperationSource(beanFactory, new EmbeddedValueResolver(beanFactory),
				DEFAULT_TTL, DEFAULT_WAIT_TIME);
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(operationSource, lockService::getObject,
				beanFactory, ON_LOST_LEASE);
		// looked up on the first call, when the registry (and its handlers) are ready, not while post-processors are made
		interceptor.setObservationRegistry(SingletonSupplier.of(() -> {
			callConvention.ifAvailable(interceptor::setCallObservationConvention);
			return observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP);
		}));
		return new DistributedLockBeanPostProcessor(operationSource, interceptor, ADVICE_ORDER);
	}

}
