package dev.distlock.core;

import org.jspecify.annotations.Nullable;

/**
 * Base of the exceptions this library throws about a lock; each names the key it is about.
 * <p>
 * The detail message is kept to one line: its control characters and line breaks (a key's, or any other text's) are
 * escaped as {@link LogSafe} does, so that a logged exception cannot forge log lines. {@link #getKey()} returns the key
 * unchanged.
 *
 * @since 0.1.0
 */
public abstract class LockException extends RuntimeException {

	/** The lock key as the caller gave it. */
	private final String key;

	/**
	 * An exception about the lock on {@code key}.
	 * @param key the lock key as the caller gave it
	 * @param message the detail message; its control characters and line breaks are escaped
	 * @param cause the cause, or {@code null}
	 */
	protected LockException(String key, String message, @Nullable Throwable cause) {
		super(LogSafe.escape(message), cause);
		this.key = key;
	}

	/** {@return the lock key as the caller gave it} */
	public String getKey() {
		return this.key;
	}

}
