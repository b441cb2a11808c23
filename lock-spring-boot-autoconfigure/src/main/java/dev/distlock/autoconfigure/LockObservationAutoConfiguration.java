package dev.distlock.autoconfigure;

import dev.distlock.core.LockService;
import dev.distlock.observability.LockAcquisitionObservationConvention;
import dev.distlock.observability.ObservedLockService;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Primary;
import org.springframework.util.function.SingletonSupplier;

/**
 * Auto-configures the observation of lock acquisitions when the application has an {@link ObservationRegistry}: the
 * application's one {@link LockService} is wrapped in an {@link ObservedLockService}, registered beside it as the
 * primary {@code LockService} bean {@value #BEAN_NAME}.
 * <p>
 * Beside, not instead: the engine bean keeps its name and its type, so code that injects the engine's own type (a
 * {@code RedisLockService}), or its {@link dev.distlock.core.LockOperatorView} (the endpoint, the health indicator and
 * the gauges do), still gets it, and the engine keeps its lifecycle. The observed service is not a view itself. Code that
 * injects {@code LockService}, the {@code @DistributedLock} interceptor included, gets the observed one. With several
 * {@code LockService} beans, or one that is already primary, nothing is wrapped: which one to observe is the
 * application's choice, made by declaring an {@code ObservedLockService} of its own.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnLocksEnabled
public final class LockObservationAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LockObservationAutoConfiguration() {
	}

	/** The name of the observed {@code LockService} bean. */
	public static final String BEAN_NAME = "observedLockService";

	@Bean(BEAN_NAME)
	@Primary
	@Conditional(OnSingleLockServiceCondition.class)
	ObservedLockService observedLockService(LockService lockService, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<LockAcquisitionObservationConvention> convention) {
		// the registry is looked up at the first acquisition, when it and its handlers are surely complete
		ObservedLockService observed = new ObservedLockService(lockService,
				SingletonSupplier.of(() -> observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP)));
		observed.setObservationConvention(convention.getIfUnique());
		return observed;
	}

}
