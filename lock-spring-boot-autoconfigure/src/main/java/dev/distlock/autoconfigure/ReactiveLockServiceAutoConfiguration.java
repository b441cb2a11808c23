package dev.distlock.autoconfigure;

import dev.distlock.core.LockService;
import dev.distlock.reactive.ReactiveLockService;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configures a {@link ReactiveLockService} on the application's {@link LockService} (the observed one, when
 * there is one) when Project Reactor is on the classpath. It is what {@code @DistributedLock} methods returning a
 * {@code Mono}, a {@code Flux} or a Kotlin {@code suspend} function lock with. An engine that acquires asynchronously
 * is used as it is; a blocking one runs its calls on threads of the service, never on a Reactor thread.
 *
 * @since 0.6.0
 */
@AutoConfiguration(after = { RedisLockServiceAutoConfiguration.class, RedlockLockServiceAutoConfiguration.class,
		LockObservationAutoConfiguration.class })
@ConditionalOnClass(name = "reactor.core.publisher.Mono")
@ConditionalOnBean(LockService.class)
@ConditionalOnLocksEnabled
public final class ReactiveLockServiceAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public ReactiveLockServiceAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	ReactiveLockService reactiveLockService(ObjectProvider<LockService> lockService) {
		return ReactiveLockService.of(lockService.getObject());
	}

}
