package dev.distlock.core;

/**
 * How a lock admits holders. Engines that do not support a mode refuse a request for it with an
 * {@link UnsupportedOperationException} naming the key and the engine, never by silently taking a plain lock.
 *
 * @since 0.4.0
 */
public enum LockMode {

	/** One holder at a time; waiters race for a released lock (the nearest process wins most often). */
	EXCLUSIVE,

	/**
	 * One holder at a time; waiters of every process queue in the store and get the lock in the order they queued: a
	 * release hands the lease straight to the head of the queue.
	 */
	FAIR,

	/**
	 * Shared with other readers of the key; excludes writers. A reader that asks for the write lock of the same key
	 * fails at once rather than deadlocking.
	 */
	READ,

	/**
	 * One writer, no readers; a queued writer holds back new readers so that a stream of readers cannot starve it. The
	 * writer may take read holds on the same key (downgrade).
	 */
	WRITE,

	/**
	 * Up to {@link LockRequest#permits()} holders at once across every process: a semaphore whose permits are leases.
	 * Each holder's permit has its own owner, lease time, renewal, fencing token and loss, as a lock's lease has; a
	 * crashed holder's permit comes back at the end of its lease time. A re-entry by the holder's owner re-enters its
	 * permit and takes no second one. All requests on one key must ask for the same number of permits while it has
	 * holders: a request with another number is refused, naming the key and both numbers.
	 *
	 * @since 0.8.0
	 */
	PERMITS;

	/** {@return whether this mode is {@link #READ} or {@link #WRITE}} */
	public boolean isReadWrite() {
		return this == READ || this == WRITE;
	}

	/**
	 * The error of an engine that does not support this mode.
	 * @param key the lock key
	 * @param engine what the engine is, for the message (e.g. "the Redlock engine")
	 * @return the exception to throw
	 */
	public UnsupportedOperationException unsupported(String key, String engine) {
		return new UnsupportedOperationException("Lock '" + LogSafe.escape(key) + "': "
				+ name().toLowerCase(java.util.Locale.ROOT)
				+ " locks are not supported by " + engine);
	}

}
