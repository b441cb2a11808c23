package dev.distlock.observability;

/**
 * How an acquisition ended, as the {@code outcome} tag of meters and observations.
 *
 * @since 0.1.0
 */
public enum AcquisitionOutcome {

	/** The lease (or a re-entry of it) was acquired. */
	ACQUIRED("acquired"),

	/** The key stayed held elsewhere for the whole wait. */
	TIMED_OUT("timed-out"),

	/** The acquisition failed: the store could not be reached, or the thread was interrupted. */
	FAILED("failed");

	private final String value;

	AcquisitionOutcome(String value) {
		this.value = value;
	}

	/** {@return the tag value} */
	public String value() {
		return this.value;
	}

}
