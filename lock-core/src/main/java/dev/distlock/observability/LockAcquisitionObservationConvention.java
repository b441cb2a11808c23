package dev.distlock.observability;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the observation of a lock acquisition; implement it (or extend
 * {@link DefaultLockAcquisitionObservationConvention}) to change them.
 *
 * @since 0.1.0
 */
public interface LockAcquisitionObservationConvention extends ObservationConvention<LockAcquisitionContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof LockAcquisitionContext;
	}

}
