package dev.distlock.interceptor;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.context.annotation.DeferredImportSelector;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;

/**
 * What {@link dev.distlock.annotation.EnableDistributedLocks @EnableDistributedLocks} imports in proxy mode:
 * {@link ProxyDistributedLockConfiguration}, deferred and ordered last, so that its condition sees the beans of every
 * other configuration, Spring Boot's auto-configurations (whose import selector is ordered just before) included.
 */
final class ProxyDistributedLockSelector implements DeferredImportSelector, Ordered {

	@Override
	public String[] selectImports(AnnotationMetadata importingClassMetadata) {
		return new String[] { ProxyDistributedLockConfiguration.class.getName() };
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

	/**
	 * Matches unless a {@link DistributedLockBeanPostProcessor} is defined already (the starter's auto-configuration
	 * defines one when it is on) or {@code distlock.enabled} (or its deprecated {@code lock.enabled}) is false: the
	 * property that turns the starter's locks off turns these off too.
	 */
	static final class NoDistributedLockPostProcessorYet implements ConfigurationCondition {

		@Override
		public ConfigurationPhase getConfigurationPhase() {
			return ConfigurationPhase.REGISTER_BEAN;
		}

		@Override
		public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
			Environment environment = context.getEnvironment();
			String enabled = environment.getProperty("distlock.enabled", environment.getProperty("lock.enabled", "true"));
			if ("false".equalsIgnoreCase(enabled.trim())) {
				return false;
			}
			ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
			return beanFactory == null
					|| beanFactory.getBeanNamesForType(DistributedLockBeanPostProcessor.class, true, false).length == 0;
		}

	}

}
