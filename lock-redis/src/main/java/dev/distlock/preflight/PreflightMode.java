package dev.distlock.preflight;

/**
 * What the startup preflight does when Redis refuses what the locks need.
 *
 * @since 0.1.0
 */
public enum PreflightMode {

	/** Fail the application's start with a {@link LockPreflightException}, analysed for the operator. */
	FAIL,

	/** Start anyway: log at WARN, and report the {@code locks} health DOWN with the reason. */
	WARN

}
