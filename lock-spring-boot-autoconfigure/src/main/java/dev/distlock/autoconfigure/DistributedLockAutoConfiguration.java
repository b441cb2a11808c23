package dev.distlock.autoconfigure;

import dev.distlock.annotation.DistributedLockConfigurationSelector;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.interceptor.DistributedLockInterceptor;
import dev.distlock.interceptor.LockDeclarationValidator;
import dev.distlock.interceptor.LockOperationSource;
import dev.distlock.observability.LockCallObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.util.function.SingletonSupplier;

/**
 * Auto-configures {@link dev.distlock.annotation.DistributedLock @DistributedLock} on whatever {@link LockService}
 * the application has: the Redis engine of {@link RedisLockServiceAutoConfiguration}, or one of the application's
 * own. Spring AOP must be on the classpath; {@code distlock.enabled=false} turns it off. Calls are locked by proxies,
 * or, with {@link dev.distlock.annotation.EnableDistributedLocks @EnableDistributedLocks(mode = ASPECTJ)}, by the
 * aspect of {@code lock-aspectj} woven into the classes.
 * <p>
 * The condition on a {@code LockService} bean sees the beans defined before this class is processed: the
 * application's own, and those of auto-configurations ordered before it. An auto-configuration that contributes
 * another engine should therefore declare {@code @AutoConfiguration(before = DistributedLockAutoConfiguration.class)}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.aop.framework.ProxyFactory")
@ConditionalOnBean(LockService.class)
@ConditionalOnLocksEnabled
@EnableConfigurationProperties(LockProperties.class)
@Import(DeprecatedLockProperties.Registrar.class)
public final class DistributedLockAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public DistributedLockAutoConfiguration() {
	}

	/**
	 * Static and with lazy dependencies, as a bean post-processor must be: it is created before the beans it
	 * advises, and must not pull the lock service (and its store) into existence early. The class's condition still
	 * applies to it: when no {@code LockService} is defined, this method is not registered at all. Not in AspectJ mode
	 * ({@code @EnableDistributedLocks(mode = ASPECTJ)}), where the woven aspect locks the calls instead of a proxy.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean(type = { "dev.distlock.interceptor.DistributedLockBeanPostProcessor",
			DistributedLockConfigurationSelector.ASPECTJ_CONFIGURATION_CLASS_NAME })
	static DistributedLockBeanPostProcessor distributedLockBeanPostProcessor(Environment environment,
			ConfigurableListableBeanFactory beanFactory, ObjectProvider<LockService> lockService,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<LockCallObservationConvention> callConvention) {
		LockProperties properties = properties(environment);
		LockOperationSource operationSource = operationSource(properties, beanFactory);
		return new DistributedLockBeanPostProcessor(operationSource,
				interceptor(operationSource, properties, beanFactory, lockService, observationRegistry, callConvention),
				properties.getAdviceOrder());
	}

	private static LockProperties properties(Environment environment) {
		return Binder.get(environment).bindOrCreate(LockProperties.PREFIX, LockProperties.class);
	}

	private static LockOperationSource operationSource(LockProperties properties,
			ConfigurableListableBeanFactory beanFactory) {
		return new LockOperationSource(beanFactory, new EmbeddedValueResolver(beanFactory), properties.getDefaultTtl(),
				properties.getDefaultWaitTime(), properties.getMaxHold());
	}

	private static DistributedLockInterceptor interceptor(LockOperationSource operationSource, LockProperties properties,
			ConfigurableListableBeanFactory beanFactory, ObjectProvider<LockService> lockService,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<LockCallObservationConvention> callConvention) {
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(operationSource, lockService::getObject,
				beanFactory, properties.getOnLostLease());
		interceptor.setInterruptOnMaxHold(properties.isMaxHoldInterrupt());
		// looked up on the first call, when the registry (and its handlers) are ready, not while post-processors are made
		interceptor.setObservationRegistry(SingletonSupplier.of(() -> {
			callConvention.ifAvailable(interceptor::setCallObservationConvention);
			return observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP);
		}));
		return interceptor;
	}

	/**
	 * AspectJ mode, chosen with {@code @EnableDistributedLocks(mode = AdviceMode.ASPECTJ)}, which imports the
	 * configuration of {@code lock-aspectj}: no proxies; the interceptor is a bean, which that configuration hands to
	 * the woven aspect, and the declarations are checked as each bean is created, as in proxy mode.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean(type = DistributedLockConfigurationSelector.ASPECTJ_CONFIGURATION_CLASS_NAME)
	static class AspectJModeConfiguration {

		/** Shared by the validator and the interceptor, so each method is parsed once. */
		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static LockOperationSource distributedLockOperationSource(Environment environment,
				ConfigurableListableBeanFactory beanFactory) {
			return operationSource(properties(environment), beanFactory);
		}

		/** Static, as it is needed by a bean post-processor's sibling: creates nothing else early. */
		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static LockDeclarationValidator distributedLockDeclarationValidator(
				@Qualifier("distributedLockOperationSource") LockOperationSource operationSource,
				ObjectProvider<LockService> lockService) {
			return new LockDeclarationValidator(operationSource, lockService::getObject);
		}

		/** What the aspect runs around each locked method: the same interceptor as in proxy mode. */
		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static DistributedLockInterceptor distributedLockInterceptor(Environment environment,
				ConfigurableListableBeanFactory beanFactory,
				@Qualifier("distributedLockOperationSource") LockOperationSource operationSource,
				ObjectProvider<LockService> lockService, ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<LockCallObservationConvention> callConvention) {
			return interceptor(operationSource, properties(environment), beanFactory, lockService, observationRegistry,
					callConvention);
		}

	}

}
