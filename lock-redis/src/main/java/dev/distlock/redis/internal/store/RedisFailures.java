package dev.distlock.redis.internal.store;

import dev.distlock.core.LockAccessDeniedException.Reason;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.preflight.LockPreflight;
import dev.distlock.preflight.RedisError;
import dev.distlock.preflight.RedisErrorClassifier;
import dev.distlock.preflight.RedisErrorKind;
import dev.distlock.preflight.Refusal;
import dev.distlock.redis.internal.script.ScriptCommands;
import org.jspecify.annotations.Nullable;

/**
 * Turns what a Redis call threw into what the caller is told: a refusal an operator must fix (credentials, a missing
 * ACL permission, TLS) is a {@link LockAccessDeniedException} naming what was refused and the rule to grant; only a
 * server that could not be reached or did not answer in time "did not answer"; any other error reply is said to be
 * one. The exception Spring Data Redis threw stays the cause. One place, so every operation words them alike.
 */
public final class RedisFailures {

	private RedisFailures() {
	}

	/**
	 * The exception for {@code action} on the lock {@code key} (Redis key {@code redisKey}) that failed with
	 * {@code failure}; {@code unansweredNote} is appended when Redis did not answer or answered with an error (for
	 * example what became of the lease).
	 * @param key the lock's key
	 * @param redisKey its key in Redis
	 * @param action what failed, as in "Could not <action> lock"
	 * @param failure the failure
	 * @param unansweredNote appended when Redis did not answer or answered with an error
	 * @return the exception to throw
	 */
	public static LockUnavailableException of(String key, String redisKey, String action, RuntimeException failure,
			String unansweredNote) {
		RedisError error = RedisErrorClassifier.classify(failure);
		String start = "Could not " + action + " lock '" + key + "': ";
		if (error.isMisconfiguration()) {
			Denial denial = denial(error, redisKey);
			return new LockAccessDeniedException(key, denial.reason(), denial.grant(),
					start + denial.text() + unansweredNote + " (" + error.message() + ")", failure);
		}
		return new LockUnavailableException(key, start + answer(error, redisKey) + unansweredNote + " ("
				+ error.message() + ")", failure);
	}

	/**
	 * Whether Redis refused the call for good: credentials, permissions or TLS.
	 * @param failure the failure
	 * @return whether Redis refused for good
	 */
	public static boolean isDenial(Throwable failure) {
		return RedisErrorClassifier.classify(failure).isMisconfiguration();
	}

	/**
	 * Whether a new acquisition that failed with {@code failure} may have left something of its owner in Redis, so
	 * that its owner id must go to the {@code HoldReconciler}: the call went unanswered (it may run yet), or Redis
	 * answered with an error raised inside the script, after which the script keeps what it wrote before (a lease
	 * without expiry: a refused PEXPIRE, or one given a number Redis does not take), until the scripts undo their
	 * writes on such an error. Not when the script was refused as a whole (a revoked {@code +evalsha}, LOADING, BUSY,
	 * READONLY, OOM) or failed with WRONGTYPE, which the first access to a key another client wrote raises: none of
	 * them wrote, and none runs later.
	 * @param failure the failure
	 * @return whether the call may have written, or may yet
	 */
	public static boolean mayHaveWritten(Throwable failure) {
		RedisError error = RedisErrorClassifier.classify(failure);
		if (error.kind() == RedisErrorKind.AUTHENTICATION || error.kind() == RedisErrorKind.TLS) {
			return false; // the connection was refused before the call was sent
		}
		if (error.kind() == RedisErrorKind.PERMISSION) {
			Refusal refusal = error.refusal();
			return refusal == null || refusal.target() != Refusal.Target.COMMAND || refusal.name() == null
					|| !refusal.name().startsWith("eval");
		}
		if (!RedisErrorClassifier.isErrorReply(failure)) {
			return true;
		}
		return !error.message().contains("WRONGTYPE") && raisedInsideScript(failure);
	}

	/** Whether Redis's error reply says a command inside a script raised it (6.2 to 7.x name the script's line). */
	private static boolean raisedInsideScript(Throwable failure) {
		for (Throwable t = failure; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t.getMessage() != null && t.getMessage().contains("@user_script")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether retrying a call that failed with {@code failure} cannot help: Redis refused it for good (credentials,
	 * an ACL permission, TLS) or answered with an error that is not a passing state of the server (WRONGTYPE, a script
	 * error, NOSCRIPT where the script could not be loaded again). Not when Redis did not answer, or answered that it
	 * cannot serve now (LOADING, BUSY, TRYAGAIN, MASTERDOWN, CLUSTERDOWN, OOM).
	 * @param failure the failure
	 * @return whether retrying cannot help
	 */
	public static boolean isPermanent(Throwable failure) {
		RedisError error = RedisErrorClassifier.classify(failure);
		return error.isMisconfiguration()
				|| (error.kind() != RedisErrorKind.UNAVAILABLE && RedisErrorClassifier.isErrorReply(failure));
	}

	/** Whether Redis answered that it does not have the script cached (a restart, SCRIPT FLUSH): EVAL it instead. */
	static boolean isNoScript(Throwable failure) {
		return says(failure, "NOSCRIPT");
	}

	private static boolean says(Throwable failure, String words) {
		for (Throwable t = failure; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t.getMessage() != null && t.getMessage().contains(words)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * A short account of {@code failure} for logs and the health details, without a stack trace or a client's
	 * exception type: what was refused and what to grant, or that Redis did not answer.
	 * @param failure the failure
	 * @param redisKey the key of the call that failed
	 * @return the account
	 */
	public static String describe(Throwable failure, String redisKey) {
		RedisError error = RedisErrorClassifier.classify(failure);
		String text = error.isMisconfiguration() ? denial(error, redisKey).text() : answer(error, redisKey);
		return text + " (" + error.message() + ")";
	}

	/**
	 * As {@link #describe(Throwable, String)} for an error reply a script caught with {@code redis.pcall}.
	 * @param errorReply the error reply
	 * @param redisKey the key of the call that failed
	 * @return the account
	 */
	public static String describeReply(String errorReply, String redisKey) {
		RedisError error = RedisErrorClassifier.classify(errorReply);
		String text = error.isMisconfiguration() ? denial(error, redisKey).text() : answer(error, redisKey);
		return text + " (" + error.message() + ")";
	}

	private static String answer(RedisError error, String redisKey) {
		if (error.kind() == RedisErrorKind.UNAVAILABLE) {
			return "Redis did not answer";
		}
		if (error.message().contains("WRONGTYPE")) {
			// another client's value where the lease would be: waiting or retrying does not help
			return "Redis answered with an error: the key '" + redisKey + "' holds a value of another type, which "
					+ "the lock scripts did not write (delete it, or give the locks another key prefix)";
		}
		return "Redis answered with an error";
	}

	/** The lock key prefix of a Redis key {@code <prefix>:{<key>}} (a prefix has no braces). */
	static String keyPrefix(String redisKey) {
		int brace = redisKey.indexOf(":{");
		return (brace > 0) ? redisKey.substring(0, brace) : redisKey;
	}

	private static Denial denial(RedisError error, String redisKey) {
		String prefix = keyPrefix(redisKey);
		return switch (error.kind()) {
			case AUTHENTICATION -> new Denial(Reason.CREDENTIALS, null, "Redis refused the application's credentials; "
					+ "set spring.data.redis.username and spring.data.redis.password to a user and password it accepts");
			case TLS -> new Denial(Reason.TLS, null, "the TLS handshake with Redis failed; give "
					+ "spring.data.redis.ssl.bundle a trust store with the server's CA (and a key store if the server "
					+ "asks for client certificates), and connect with a host name its certificate lists");
			default -> permission(error.refusal(), error.message(), prefix, redisKey);
		};
	}

	private static Denial permission(@Nullable Refusal refusal, String message, String prefix, String redisKey) {
		boolean inScript = message.contains("@user_script") || message.contains("ACL failure in script");
		if (refusal != null && refusal.target() == Refusal.Target.COMMAND && refusal.name() == null) {
			// a command inside a script that Redis 7.0 does not name: the script's line that Redis names does
			String command = ScriptCommands.refusedCommand(message);
			if (command != null) {
				refusal = new Refusal(Refusal.Target.COMMAND, command);
			}
		}
		String grant = (refusal != null) ? refusal.grant(prefix) : null;
		if (refusal == null || grant == null) {
			String acl = LockPreflight.minimalAcl(prefix);
			return new Denial(Reason.PERMISSION, acl, "Redis's ACL refused a command inside the lock scripts; grant "
					+ "the application's Redis user the minimal ACL for key prefix '" + prefix + "': " + acl);
		}
		String what = switch (refusal.target()) {
			case COMMAND -> "the '" + refusal.name() + "' command" + (inScript ? " inside the lock scripts" : "");
			case KEY -> "the key '" + redisKey + "'";
			case CHANNEL -> "the channel '" + redisKey + ":released'";
		};
		return new Denial(Reason.PERMISSION, grant, "Redis's ACL refused " + what + "; grant the application's Redis "
				+ "user " + grant + " (ACL SETUSER <user> " + grant + ")");
	}

	private record Denial(Reason reason, @Nullable String grant, String text) {
	}

}
