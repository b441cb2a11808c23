package dev.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The condition of {@link ConditionalOnLocksEnabled}: {@code distlock.enabled}, else the deprecated
 * {@code lock.enabled}, else enabled. Conditions are evaluated before {@link DeprecatedLockProperties} copies the old
 * properties to the new names, so this one reads both.
 */
class OnLocksEnabledCondition extends SpringBootCondition {

	private static final String PROPERTY = DeprecatedLockProperties.NEW_PREFIX + ".enabled";

	private static final String DEPRECATED_PROPERTY = DeprecatedLockProperties.OLD_PREFIX + ".enabled";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Environment environment = context.getEnvironment();
		String name = environment.containsProperty(PROPERTY) ? PROPERTY
				: environment.containsProperty(DEPRECATED_PROPERTY) ? DEPRECATED_PROPERTY : null;
		if (name == null) {
			return ConditionOutcome.match(PROPERTY + " is not set");
		}
		Boolean enabled = environment.getProperty(name, Boolean.class);
		return (Boolean.FALSE.equals(enabled)) ? ConditionOutcome.noMatch(name + " is false")
				: ConditionOutcome.match(name + " is " + enabled);
	}

}
