package dev.distlock.test.redis;

/**
 * An error reply ({@code -ERR ...}) from {@link RedisServer#execute(String...)}.
 *
 * <p>A distinct type so tests can tell a Redis-level error from an I/O failure such as a timeout.
 */
public final class RedisErrorException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public RedisErrorException(String message) {
		super(message);
	}
}
