package dev.distlock.observability;

import dev.distlock.core.Lease;
import dev.distlock.observability.LockObservationDocumentation.AcquisitionHighCardinalityKeys;
import dev.distlock.observability.LockObservationDocumentation.LowCardinalityKeys;
import io.micrometer.common.KeyValues;

/**
 * The default names and tags of an acquisition: {@value #NAME}, the lock's name and the outcome as low-cardinality
 * tags, the key and the fencing token as high-cardinality ones (traces only, never meters).
 *
 * @since 0.1.0
 */
public class DefaultLockAcquisitionObservationConvention implements LockAcquisitionObservationConvention {

	/** The observation's name. */
	public static final String NAME = "distlock.acquisition";

	/** A shared instance. */
	public static final DefaultLockAcquisitionObservationConvention INSTANCE = new DefaultLockAcquisitionObservationConvention();

	/** The default acquisition convention; extend it to change some names or tags and keep the others. */
	public DefaultLockAcquisitionObservationConvention() {
	}

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(LockAcquisitionContext context) {
		return "acquire lock " + context.getLockName();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(LockAcquisitionContext context) {
		AcquisitionOutcome outcome = context.getOutcome();
		return KeyValues.of(LowCardinalityKeys.LOCK_NAME.withValue(context.getLockName()),
				LowCardinalityKeys.OUTCOME.withValue((outcome != null) ? outcome.value() : "unknown"));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(LockAcquisitionContext context) {
		KeyValues values = KeyValues.of(AcquisitionHighCardinalityKeys.KEY.withValue(context.getKey()));
		Lease lease = context.getLease();
		if (lease != null) {
			values = values.and(AcquisitionHighCardinalityKeys.FENCING_TOKEN.withValue(Long.toString(lease.fencingToken())));
		}
		return values;
	}

}
