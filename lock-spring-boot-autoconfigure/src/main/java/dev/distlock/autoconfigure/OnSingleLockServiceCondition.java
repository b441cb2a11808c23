package dev.distlock.autoconfigure;

import java.util.Arrays;

import dev.distlock.core.LockService;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.Assert;

/**
 * Matches when exactly one {@link LockService} bean is defined and it is not primary, so that a primary wrapper of
 * it is the only primary {@code LockService}. Unlike {@code @ConditionalOnSingleCandidate} it does not match a primary
 * one among several: a second primary would make every injection of {@code LockService} ambiguous.
 */
class OnSingleLockServiceCondition extends SpringBootCondition implements ConfigurationCondition {

	@Override
	public ConfigurationPhase getConfigurationPhase() {
		return ConfigurationPhase.REGISTER_BEAN;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		Assert.state(beanFactory != null, "A bean factory is needed to look for LockService beans");
		String[] names = beanFactory.getBeanNamesForType(LockService.class, true, false);
		if (names.length != 1) {
			return ConditionOutcome.noMatch("expected one LockService bean, found " + names.length
					+ ((names.length > 0) ? ": " + Arrays.toString(names) : ""));
		}
		if (beanFactory.containsBeanDefinition(names[0]) && beanFactory.getBeanDefinition(names[0]).isPrimary()) {
			return ConditionOutcome.noMatch("the one LockService bean '" + names[0] + "' is primary already");
		}
		return ConditionOutcome.match("one LockService bean, '" + names[0] + "'");
	}

}
