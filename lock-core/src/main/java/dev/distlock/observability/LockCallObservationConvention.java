package dev.distlock.observability;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the observation of a locked call; implement it (or extend
 * {@link DefaultLockCallObservationConvention}) to change them.
 *
 * @since 0.1.0
 */
public interface LockCallObservationConvention extends ObservationConvention<LockCallContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof LockCallContext;
	}

}
