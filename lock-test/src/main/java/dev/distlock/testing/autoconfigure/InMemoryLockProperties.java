package dev.distlock.testing.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the in-memory lock engine of {@code dev.distlock:lock-test}, under {@value #PREFIX}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(InMemoryLockProperties.PREFIX)
public class InMemoryLockProperties {

	/** The prefix of these properties. */
	public static final String PREFIX = "distlock.in-memory";

	/**
	 * Whether to run the locks on the in-memory engine of lock-test instead of Redis, with a warning at startup: for a
	 * local run of a single instance. It excludes only within this JVM, never other instances of the application.
	 */
	private boolean enabled;

	/**
	 * Whether the in-memory engine's time stands still until a test advances it (LockScenarios.advance).
	 */
	private boolean manualClock;

	/** Properties with their defaults. */
	public InMemoryLockProperties() {
	}

	/** {@return whether the locks run on the in-memory engine} */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Set whether the locks run on the in-memory engine.
	 * @param enabled whether they do
	 */
	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	/** {@return whether the engine's time stands still until a test advances it} */
	public boolean isManualClock() {
		return this.manualClock;
	}

	/**
	 * Set whether the engine's time stands still until a test advances it.
	 * @param manualClock whether it does
	 */
	public void setManualClock(boolean manualClock) {
		this.manualClock = manualClock;
	}

}
