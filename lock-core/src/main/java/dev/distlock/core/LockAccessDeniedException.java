package dev.distlock.core;

import org.jspecify.annotations.Nullable;

/**
 * The store refused a lock call: the application's credentials, a permission of its user, or the TLS handshake. Unlike
 * an unreachable store, waiting does not help, so an acquisition fails at once instead of retrying within its wait; an
 * operator must change the configuration. The message names what was refused and, where it can, the permission to
 * grant ({@link #getGrant()}).
 * <p>
 * A subclass of {@link LockUnavailableException}, so code that handles an unusable store keeps handling it; it is
 * not a {@link TransientLockException}, so {@code @Retryable(includes = TransientLockException.class)} does not retry
 * it. The store's own exception (for Redis, Spring's translated {@code DataAccessException}) is the cause.
 *
 * @since 0.1.0
 */
public class LockAccessDeniedException extends LockUnavailableException {

	/** What the store refused. */
	private final Reason reason;

	/** The permission that would allow it, in the store's own terms, or null when it cannot be told. */
	private final @Nullable String grant;

	/**
	 * An exception for a call on {@code key} that the store refused.
	 * @param key the lock key as the caller gave it
	 * @param reason what the store refused
	 * @param grant the permission to grant (for Redis an ACL rule such as {@code +evalsha} or {@code &lock:*}), or
	 * {@code null}
	 * @param message the detail message, naming the key, what was refused and what to change
	 * @param cause the store's error
	 */
	public LockAccessDeniedException(String key, Reason reason, @Nullable String grant, String message,
			Throwable cause) {
		super(key, message, cause);
		this.reason = reason;
		this.grant = grant;
	}

	/** {@return what the store refused} */
	public Reason getReason() {
		return this.reason;
	}

	/** {@return the permission that would allow the call (an ACL rule for Redis), or {@code null} when unknown} */
	public @Nullable String getGrant() {
		return this.grant;
	}

	/** What a store can refuse. */
	public enum Reason {

		/** The credentials: a wrong user name or password, or none where the store wants some. */
		CREDENTIALS,

		/** A permission of the application's user: a command, a key or a channel. */
		PERMISSION,

		/** The TLS handshake: an untrusted or mismatching certificate, or a client certificate the store wants. */
		TLS

	}

}
