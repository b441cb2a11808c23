package dev.distlock.observability;

import dev.distlock.observability.LockObservationDocumentation.CallHighCardinalityKeys;
import dev.distlock.observability.LockObservationDocumentation.LowCardinalityKeys;
import io.micrometer.common.KeyValues;

/**
 * The default names and tags of a locked call: {@value #NAME}, the lock's name as a low-cardinality tag, the keys as a
 * high-cardinality one.
 *
 * @since 0.1.0
 */
public class DefaultLockCallObservationConvention implements LockCallObservationConvention {

	/** The observation's name. */
	public static final String NAME = "distlock.call";

	/** A shared instance. */
	public static final DefaultLockCallObservationConvention INSTANCE = new DefaultLockCallObservationConvention();

	/** The default locked-call convention; extend it to change some names or tags and keep the others. */
	public DefaultLockCallObservationConvention() {
	}

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(LockCallContext context) {
		return "locked " + context.getLockName();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(LockCallContext context) {
		return KeyValues.of(LowCardinalityKeys.LOCK_NAME.withValue(context.getLockName()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(LockCallContext context) {
		return KeyValues.of(CallHighCardinalityKeys.KEYS.withValue(String.join(",", context.getKeys())),
				CallHighCardinalityKeys.METHOD.withValue(context.getMethod()));
	}

}
