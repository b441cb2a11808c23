package dev.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches unless {@code distlock.enabled} is {@code false}, or, while it is not set, the deprecated
 * {@code lock.enabled} is. When {@code lock.*} is gone, this becomes
 * {@code @ConditionalOnBooleanProperty(name = "distlock.enabled", matchIfMissing = true)}.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(OnLocksEnabledCondition.class)
@interface ConditionalOnLocksEnabled {

}
