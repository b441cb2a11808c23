package dev.distlock.preflight;

/**
 * What kind of failure a Redis call met: the first three need an operator to change the configuration, an
 * {@link #UNAVAILABLE} server may come back by itself.
 *
 * @since 0.1.0
 * @see RedisErrorClassifier
 */
public enum RedisErrorKind {

	/** Redis refused the credentials ({@code WRONGPASS}) or wants some ({@code NOAUTH}). */
	AUTHENTICATION,

	/** The ACL user may not run a command, touch a key or use a channel ({@code NOPERM}, or a script's denial). */
	PERMISSION,

	/** The TLS handshake failed: an untrusted or mismatching certificate, or a client certificate the server wants. */
	TLS,

	/** Redis could not be reached or could not serve now: refused or reset connections, timeouts, loading, busy. */
	UNAVAILABLE,

	/** Anything else Redis answered with an error. */
	OTHER

}
