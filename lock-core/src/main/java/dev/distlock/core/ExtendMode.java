package dev.distlock.core;

/**
 * How {@link Lease#extend(java.time.Duration, ExtendMode)} changes a lease's remaining time.
 *
 * @since 0.1.0
 */
public enum ExtendMode {

	/** Add the given time to what is left (redis-py's {@code extend(t)}). */
	ADD,

	/**
	 * Set what is left to exactly the given time, shorter or longer (redis-py's {@code extend(t, replace_ttl=True)});
	 * the given time becomes the lease time that the watchdog renews to from then on.
	 */
	REPLACE

}
