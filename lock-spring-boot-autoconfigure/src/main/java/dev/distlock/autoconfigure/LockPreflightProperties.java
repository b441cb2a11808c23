package dev.distlock.autoconfigure;

import java.time.Duration;

import dev.distlock.preflight.PreflightMode;

/**
 * The check at startup that the Redis user may do everything the locks need.
 * <p>
 * Bound under {@code distlock.preflight} through {@link LockProperties#getPreflight()}: one group of
 * {@link LockProperties}, in a class of its own only to keep each class short; the property names, defaults and
 * checks are those of the group.
 */
public class LockPreflightProperties {

	/** Created with the defaults, then bound by Spring Boot. */
	public LockPreflightProperties() {
	}

	/**
	 * Whether to check at startup that Redis accepts the credentials and TLS handshake, and allows every command,
	 * key and channel the locks use.
	 */
	private boolean enabled = true;

	/**
	 * What a refusal does: 'fail' the start, or 'warn' in the log and report the "locks" health DOWN. A Redis
	 * that is merely unreachable never fails the start.
	 */
	private PreflightMode mode = PreflightMode.FAIL;

	/**
	 * How long the check may hold up the start at most; a Redis that does not answer within it is taken as
	 * unreachable. It covers the application's first connection, TLS handshake and class loading included.
	 */
	private Duration timeout = Duration.ofSeconds(10);

	/** {@return whether the check runs at startup} */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Set whether the check runs at startup.
	 * @param enabled whether to check
	 */
	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	/** {@return what a refusal does} */
	public PreflightMode getMode() {
		return this.mode;
	}

	/**
	 * Set what a refusal does.
	 * @param mode fail the start, or warn and report the health DOWN
	 */
	public void setMode(PreflightMode mode) {
		this.mode = mode;
	}

	/** {@return how long the check may hold up the start at most} */
	public Duration getTimeout() {
		return this.timeout;
	}

	/**
	 * Set how long the check may hold up the start at most.
	 * @param timeout the deadline; at least 1ms
	 */
	public void setTimeout(Duration timeout) {
		if (timeout == null || timeout.toMillis() < 1) {
			throw new IllegalArgumentException("distlock.preflight.timeout must be at least 1ms, but was " + timeout);
		}
		this.timeout = timeout;
	}

}
