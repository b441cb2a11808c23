package dev.distlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Import;

/**
 * Chooses how {@link DistributedLock @DistributedLock} methods are advised, like Spring's
 * {@code @EnableTransactionManagement} and {@code @EnableCaching}. Optional with Spring Boot: without it the
 * auto-configuration advises in {@link AdviceMode#PROXY PROXY} mode. Needed without Boot ({@code lock-core} and an
 * engine such as {@code lock-redis}, and a {@code LockService} bean): there it sets up the proxies itself, with the
 * settings each annotation declares and the defaults of the starter's {@code distlock.*} properties (a lease time of
 * 30 s, a wait of 5 s, first among a bean's advisors, a lost lease ends the call with an exception);
 * {@code distlock.enabled=false} in the {@code Environment} turns it off.
 * <ul>
 * <li>{@link AdviceMode#PROXY PROXY} (the default): a Spring proxy in front of each bean with a locked method. Only
 * calls that come through the proxy are locked: a call from the bean to itself ({@code this.purchase()}) is not, and
 * private, final and static methods are rejected at startup.</li>
 * <li>{@link AdviceMode#ASPECTJ ASPECTJ}: the {@code dev.distlock.aspectj.DistributedLockAspect} of the
 * {@code lock-aspectj} module, woven into the annotated classes at compile time or load time, locks every execution
 * of an annotated method, self-invocations included. No proxy is made; the aspect runs the same interceptor the proxy
 * would, configured from this application context.</li>
 * </ul>
 *
 * @since 0.1.0
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(DistributedLockConfigurationSelector.class)
public @interface EnableDistributedLocks {

	/**
	 * {@return how locked methods are advised}: with a proxy (the default), or by the AspectJ aspect woven into them,
	 * which needs {@code lock-aspectj} on the classpath and compile-time or load-time weaving.
	 */
	AdviceMode mode() default AdviceMode.PROXY;

}
