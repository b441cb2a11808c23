package dev.distlock.preflight;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.distlock.preflight.Refusal.Target;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Tells what kind of failure a Redis call met, from the exception Spring Data Redis or its client threw: wrong
 * credentials, a missing ACL permission and a failed TLS handshake need an operator, an unreachable server may come
 * back by itself, and each needs its own message. Clients wrap Redis's error reply, or the TLS or network error, in
 * exceptions of their own ({@code RedisConnectionFailureException: Unable to connect to Redis} over
 * {@code RedisConnectionException} over {@code WRONGPASS ...}), so the whole cause chain is read, and the
 * decisive cause wins over its wrappers.
 * <p>
 * A pure function of the exception's types (matched by name, so no client class needs to be present) and messages.
 * It knows the texts of Redis 6.0 to 7.x: for example {@code NOPERM this user has no permissions to run the 'evalsha'
 * command} (7.0), {@code NOPERM User app has no permissions to run the 'evalsha' command} (7.2), and a denial inside a
 * script, {@code ERR The user executing the script can't run this command or subcommand} (7.0) or
 * {@code ERR ACL failure in script: ...} (7.2); Redis 6.2 wraps the latter two in
 * {@code ERR Error running script (call to f_<sha>): @user_script:8: ...}.
 *
 * @since 0.1.0
 */
public final class RedisErrorClassifier {

	/** A Redis error reply: an upper-case code (ERR, NOPERM, WRONGPASS, ...), a space and the text. */
	private static final Pattern ERROR_REPLY = Pattern.compile("^-?([A-Z][A-Z_]+) (.*)$", Pattern.DOTALL);

	/** A refused command named in a NOPERM reply: "... run the 'evalsha' command" (7.0 and 7.2). */
	private static final Pattern REFUSED_COMMAND = Pattern.compile("run the '([^']+)' command");

	/** A refused key or channel named in a verbose ACL error (7.2): "... access the 'k' key". */
	private static final Pattern REFUSED_NAME = Pattern.compile("access the '([^']*)' (key|channel)");

	/** Error codes of a server that is there but cannot serve now: it is loading, busy, failing over or full. */
	private static final Set<String> TRANSIENT_CODES = Set.of("LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN",
			"OOM");

	/** Exceptions (or their superclasses) that mean the server could not be reached or did not answer in time. */
	private static final Set<String> UNAVAILABLE_TYPES = Set.of("java.net.ConnectException", "java.net.SocketException",
			"java.net.SocketTimeoutException", "java.net.UnknownHostException", "java.net.NoRouteToHostException",
			"java.nio.channels.ClosedChannelException", "java.util.concurrent.TimeoutException",
			"java.io.EOFException", "org.springframework.dao.DataAccessResourceFailureException",
			"org.springframework.dao.QueryTimeoutException", "io.lettuce.core.RedisConnectionException",
			"io.lettuce.core.RedisCommandTimeoutException", "redis.clients.jedis.exceptions.JedisConnectionException");

	/** Exceptions (or their superclasses) of a failed TLS handshake or certificate check. */
	private static final Set<String> TLS_TYPES = Set.of("javax.net.ssl.SSLException",
			"java.security.cert.CertificateException", "java.security.cert.CertPathBuilderException",
			"java.security.cert.CertPathValidatorException");

	private static final Pattern NATIVE_CALL_FAILED = Pattern.compile("\\w+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ");

	/** Texts of TLS failures that some clients keep only in a wrapper's message. */
	private static final String[] TLS_TEXTS = { "PKIX path building failed",
			"unable to find valid certification path", "certificate_required", "bad_certificate", "unknown_ca",
			"No subject alternative", "No name matching", "certificate_expired", "handshake_failure" };

	private static final int MAX_DEPTH = 32;

	private RedisErrorClassifier() {
	}

	/**
	 * Classify {@code failure} by its whole cause chain.
	 * @param failure what a Redis call threw
	 * @return the classified failure
	 */
	public static RedisError classify(Throwable failure) {
		Assert.notNull(failure, "'failure' must not be null");
		List<Throwable> chain = new ArrayList<>();
		for (Throwable t = failure; t != null && chain.size() < MAX_DEPTH && !contains(chain, t); t = t.getCause()) {
			chain.add(t);
		}
		Throwable tls = tlsFailure(chain);
		if (tls != null) {
			return new RedisError(RedisErrorKind.TLS, null, describe(tls));
		}
		// the innermost error reply decides: wrappers repeat it or say less
		RedisError reply = null;
		for (Throwable t : chain) {
			RedisError classified = classifyReply(t.getMessage());
			if (classified != null) {
				reply = classified;
			}
		}
		if (reply != null) {
			return reply;
		}
		for (Throwable t : chain) {
			if (isA(t, UNAVAILABLE_TYPES) || isConnectionClosed(t.getMessage())) {
				return new RedisError(RedisErrorKind.UNAVAILABLE, null, describe(innermost(chain)));
			}
		}
		return new RedisError(RedisErrorKind.OTHER, null, describe(innermost(chain)));
	}

	/**
	 * Whether {@code failure} carries an error reply of Redis anywhere in its cause chain: Redis answered the call (it
	 * refused it, or the command failed), as opposed to a call that could not be sent or whose answer did not come. An
	 * answered call does not run later; an unanswered one may.
	 * @param failure what a Redis call threw
	 * @return true when Redis answered with an error
	 */
	public static boolean isErrorReply(Throwable failure) {
		Assert.notNull(failure, "'failure' must not be null");
		int depth = 0;
		for (Throwable t = failure; t != null && depth < MAX_DEPTH; t = (t.getCause() != t) ? t.getCause() : null) {
			if (classifyReply(t.getMessage()) != null) {
				return true;
			}
			depth++;
		}
		return false;
	}

	/**
	 * Classify a Redis error reply given as text, such as one a script caught with {@code redis.pcall}; a text that is
	 * no error reply is {@link RedisErrorKind#OTHER OTHER}.
	 * @param errorReply the error reply's text
	 * @return the classified failure
	 */
	public static RedisError classify(String errorReply) {
		Assert.notNull(errorReply, "'errorReply' must not be null");
		RedisError classified = classifyReply(errorReply);
		return (classified != null) ? classified : new RedisError(RedisErrorKind.OTHER, null, errorReply);
	}

	private static @Nullable RedisError classifyReply(@Nullable String message) {
		if (message == null) {
			return null;
		}
		Matcher reply = ERROR_REPLY.matcher(message.trim());
		if (!reply.matches()) {
			return null;
		}
		String code = reply.group(1);
		String text = reply.group(2);
		String whole = message.trim();
		if (code.equals("WRONGPASS") || code.equals("NOAUTH") || isOldAuthenticationError(code, text)) {
			return new RedisError(RedisErrorKind.AUTHENTICATION, null, whole);
		}
		if (code.equals("NOPERM") || text.contains("ACL failure in script")
				|| text.contains("The user executing the script can't")) { // 6.2 wraps it: "Error running script ..."

			return new RedisError(RedisErrorKind.PERMISSION, refusal(text), whole);
		}
		if (TRANSIENT_CODES.contains(code)) {
			return new RedisError(RedisErrorKind.UNAVAILABLE, null, whole);
		}
		return new RedisError(RedisErrorKind.OTHER, null, whole);
	}

	/** Redis before 6.0: no WRONGPASS code yet. */
	private static boolean isOldAuthenticationError(String code, String text) {
		return code.equals("ERR") && (text.startsWith("invalid password") || text.startsWith("AUTH ")
				|| text.startsWith("Client sent AUTH") || text.startsWith("invalid username-password pair"));
	}

	/** What the ACL refused, from a NOPERM reply or a script's denial. */
	private static Refusal refusal(String text) {
		Matcher command = REFUSED_COMMAND.matcher(text);
		if (command.find()) {
			return new Refusal(Target.COMMAND, command.group(1).toLowerCase(Locale.ROOT));
		}
		Matcher named = REFUSED_NAME.matcher(text);
		if (named.find()) {
			return new Refusal(named.group(2).equals("key") ? Target.KEY : Target.CHANNEL, named.group(1));
		}
		String lower = text.toLowerCase(Locale.ROOT);
		if (lower.contains("channel")) {
			return new Refusal(Target.CHANNEL, null);
		}
		if (lower.contains("key")) {
			return new Refusal(Target.KEY, null);
		}
		// "can't run this command or subcommand": a script's denial does not name the command in Redis 7.0
		return new Refusal(Target.COMMAND, null);
	}

	/**
	 * The outermost TLS exception (the JDK's handshake exception says most: "PKIX path building failed: ..."), or else
	 * the innermost exception whose message tells of a TLS failure.
	 */
	private static @Nullable Throwable tlsFailure(List<Throwable> chain) {
		for (Throwable t : chain) {
			if (isA(t, TLS_TYPES)) {
				return t;
			}
		}
		Throwable found = null;
		for (Throwable t : chain) {
			String message = t.getMessage();
			if (message != null) {
				for (String text : TLS_TEXTS) {
					if (message.contains(text)) {
						found = t;
					}
				}
			}
		}
		return found;
	}

	private static boolean isConnectionClosed(@Nullable String message) {
		return message != null && (message.startsWith("Connection closed") || message.startsWith("Connection is closed")
				|| message.startsWith("Connection reset"));
	}

	private static boolean isA(Throwable t, Set<String> typeNames) {
		for (Class<?> type = t.getClass(); type != null; type = type.getSuperclass()) {
			if (typeNames.contains(type.getName())) {
				return true;
			}
		}
		return false;
	}

	/** The innermost cause with a message, or the innermost cause if none has one. */
	private static Throwable innermost(List<Throwable> chain) {
		for (int i = chain.size() - 1; i >= 0; i--) {
			if (chain.get(i).getMessage() != null) {
				return chain.get(i);
			}
		}
		return chain.get(chain.size() - 1);
	}

	private static boolean contains(List<Throwable> chain, Throwable t) {
		for (Throwable seen : chain) {
			if (seen == t) {
				return true;
			}
		}
		return false;
	}

	private static String describe(Throwable t) {
		String message = t.getMessage();
		if (message == null) {
			return t.getClass().getName();
		}
		// Netty's native transports (epoll, kqueue: with reactor-netty on the classpath) prefix the system's words with
		// the call that failed, "finishConnect(..) failed with error(-111): Connection refused": keep the words
		Matcher nativeCall = NATIVE_CALL_FAILED.matcher(message);
		return nativeCall.lookingAt() ? message.substring(nativeCall.end()) : message;
	}

}
