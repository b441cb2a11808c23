package dev.distlock.aspectj;

import dev.distlock.interceptor.DistributedLockInterceptor;
import org.aspectj.lang.Aspects;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;

/**
 * Imported by {@code @EnableDistributedLocks(mode = AdviceMode.ASPECTJ)}: configures the woven
 * {@link DistributedLockAspect} with the {@link DistributedLockInterceptor} of this application context, and releases
 * it when the context closes. Its presence is what tells the auto-configuration to make no proxies and to define that
 * interceptor as a bean instead. Without the auto-configuration's interceptor (no lock service, or
 * {@code distlock.enabled=false}) the aspect stays unconfigured, and the methods run unlocked. A bean whose locked
 * method was not woven (no weaving plugin or agent) fails the start, as nothing would lock it.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
@ImportRuntimeHints(AspectJLockRuntimeHints.class)
public class AspectJDistributedLockConfiguration implements DisposableBean {

	private @Nullable DistributedLockInterceptor configured;

	/** Created by Spring, as imported by {@code @EnableDistributedLocks}. */
	public AspectJDistributedLockConfiguration() {
	}

	/**
	 * Fails the start when a bean's locked method was not woven, which would otherwise run unlocked.
	 * @return the check, a bean post-processor
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	public static BeanPostProcessor distributedLockWeavingCheck() {
		return new WeavingCheck();
	}

	/**
	 * The aspect's single instance ({@code aspectOf()}), configured with the interceptor of this context.
	 * @param interceptor the interceptor the auto-configuration defines in AspectJ mode, if any
	 * @return the aspect
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	public DistributedLockAspect distributedLockAspect(ObjectProvider<DistributedLockInterceptor> interceptor) {
		DistributedLockAspect aspect = Aspects.aspectOf(DistributedLockAspect.class);
		DistributedLockInterceptor available = interceptor.getIfUnique();
		if (available != null) {
			aspect.configure(available);
			this.configured = available;
		}
		return aspect;
	}

	/** The context is closing: its lock service goes away, so its interceptor must no longer be used. */
	@Override
	public void destroy() {
		DistributedLockInterceptor interceptor = this.configured;
		if (interceptor != null) {
			Aspects.aspectOf(DistributedLockAspect.class).release(interceptor);
			this.configured = null;
		}
	}

}
