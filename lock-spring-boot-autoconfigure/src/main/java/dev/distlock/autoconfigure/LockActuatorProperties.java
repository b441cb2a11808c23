package dev.distlock.autoconfigure;

/**
 * The "locks" actuator endpoint.
 * <p>
 * Bound under {@code distlock.actuator} through {@link LockProperties#getActuator()}: one group of
 * {@link LockProperties}, in a class of its own only to keep each class short; the property names, defaults and
 * checks are those of the group.
 */
public class LockActuatorProperties {

	private final ForceRelease forceRelease = new ForceRelease();

	/** Endpoint settings with their defaults. */
	public LockActuatorProperties() {
	}

	/** {@return the settings of the forced release through the endpoint} */
	public ForceRelease getForceRelease() {
		return this.forceRelease;
	}

	/** Forced release of a lock through the endpoint. */
	public static class ForceRelease {

		/**
		 * Whether the "locks" endpoint offers a delete operation that force-releases a key, whoever holds it. Every
		 * use is logged at WARN and published as an audit event.
		 */
		private boolean enabled;

		/** Forced release settings with their defaults: off. */
		public ForceRelease() {
		}

		/** {@return whether the endpoint offers the force-release operation} */
		public boolean isEnabled() {
			return this.enabled;
		}

		/**
		 * Set whether the endpoint offers the force-release operation.
		 * @param enabled whether it does
		 */
		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

}
