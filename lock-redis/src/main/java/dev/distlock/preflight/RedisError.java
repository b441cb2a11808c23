package dev.distlock.preflight;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * A classified failure of a Redis call.
 *
 * @param kind what kind of failure it is
 * @param refusal what the ACL refused, for a {@link RedisErrorKind#PERMISSION PERMISSION} failure; otherwise
 * {@code null}
 * @param message the message that decided the classification: Redis's error reply, or the TLS or network error
 * @since 0.1.0
 * @see RedisErrorClassifier
 */
public record RedisError(RedisErrorKind kind, @Nullable Refusal refusal, String message) {

	/**
	 * A classified failure.
	 * @param kind what kind of failure it is
	 * @param refusal what the ACL refused, or {@code null}
	 * @param message the message that decided the classification
	 */
	public RedisError {
		Assert.notNull(kind, "'kind' must not be null");
		Assert.notNull(message, "'message' must not be null");
	}

	/**
	 * Whether an operator must change the configuration: credentials, ACL or TLS.
	 * @return true for credentials, permission and TLS failures
	 */
	public boolean isMisconfiguration() {
		return this.kind == RedisErrorKind.AUTHENTICATION || this.kind == RedisErrorKind.PERMISSION
				|| this.kind == RedisErrorKind.TLS;
	}

}
