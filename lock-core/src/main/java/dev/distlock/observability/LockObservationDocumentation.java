package dev.distlock.observability;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of {@code @DistributedLock} calls: the call as a whole, and within it each lock acquisition, so a
 * trace shows the time spent waiting for a lock as its own span.
 *
 * @since 0.1.0
 */
public enum LockObservationDocumentation implements ObservationDocumentation {

	/** A lock acquisition: from the first attempt until the lease is held, the wait is over, or it failed. */
	ACQUISITION {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultLockAcquisitionObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return AcquisitionHighCardinalityKeys.values();
		}

	},

	/** A locked call: acquiring its locks, running the method, and releasing them. */
	CALL {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultLockCallObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { LowCardinalityKeys.LOCK_NAME };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return CallHighCardinalityKeys.values();
		}

	};

	/** Low-cardinality tags: they also become meter tags. */
	public enum LowCardinalityKeys implements KeyName {

		/** The lock's name. */
		LOCK_NAME {
			@Override
			public String asString() {
				return "distlock.name";
			}
		},

		/** How an acquisition ended: acquired, timed-out or failed. */
		OUTCOME {
			@Override
			public String asString() {
				return "distlock.outcome";
			}
		}

	}

	/** High-cardinality tags of an acquisition: spans only. */
	public enum AcquisitionHighCardinalityKeys implements KeyName {

		/** The evaluated lock key. */
		KEY {
			@Override
			public String asString() {
				return "distlock.key";
			}
		},

		/** The fencing token of the acquired lease. */
		FENCING_TOKEN {
			@Override
			public String asString() {
				return "distlock.fencing-token";
			}
		}

	}

	/** High-cardinality tags of a locked call: spans only. */
	public enum CallHighCardinalityKeys implements KeyName {

		/** The evaluated lock keys, comma-separated. */
		KEYS {
			@Override
			public String asString() {
				return "distlock.keys";
			}
		},

		/** The locked method. */
		METHOD {
			@Override
			public String asString() {
				return "distlock.method";
			}
		}

	}

}
