package dev.distlock.autoconfigure;

/**
 * The "locks" health indicator.
 * <p>
 * Bound under {@code distlock.health} through {@link LockProperties#getHealth()}: one group of
 * {@link LockProperties}, in a class of its own only to keep each class short; the property names, defaults and
 * checks are those of the group.
 */
public class LockHealthProperties {

	/**
	 * Health status reported while renewals of held leases are failing: 'down', 'out-of-service' (to take the
	 * instance out of a load balancer without restarting it) or a custom status code.
	 */
	private String renewalFailureStatus = "down";

	/** Health settings with their defaults. */
	public LockHealthProperties() {
	}

	/** {@return the health status reported while renewals of held leases are failing} */
	public String getRenewalFailureStatus() {
		return this.renewalFailureStatus;
	}

	/**
	 * Set the health status reported while renewals of held leases are failing.
	 * @param renewalFailureStatus the status code; not blank
	 */
	public void setRenewalFailureStatus(String renewalFailureStatus) {
		if (renewalFailureStatus == null || renewalFailureStatus.isBlank()) {
			throw new IllegalArgumentException("distlock.health.renewal-failure-status must not be blank");
		}
		this.renewalFailureStatus = renewalFailureStatus;
	}

}
