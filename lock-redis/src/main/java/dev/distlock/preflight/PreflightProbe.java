package dev.distlock.preflight;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.distlock.preflight.Refusal.Target;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

/**
 * The commands of one {@link LockPreflight} check, sent on the application's own connections, and the findings they
 * produce: the script of {@link LockPreflight#SCRIPT} through {@code EVAL} and {@code EVALSHA}, the commands the engine
 * sends outside its scripts, {@code WAIT} with replica acknowledgements, and the release subscription on Lettuce.
 * Apart from {@link LockPreflight}, which owns the deadline, the thread and the report, so that what is asked of Redis
 * and how long the start waits for the answer can be read (and changed) one without the other.
 * <p>
 * Immutable; each {@link #run()} collects its findings in a list of its own, so a run the deadline gave up on (its
 * thread interrupted, and perhaps still blocked in a command) shares nothing with the report already returned.
 */
final class PreflightProbe {

	private final RedisConnectionFactory connectionFactory;

	private final String keyPrefix;

	/** {@link LockPreflight#key()}. */
	private final String key;

	/** {@link LockPreflight#channel()}. */
	private final String channel;

	/** Replicas that must acknowledge a new lease; above 0, the check sends {@code WAIT} as well. */
	private final int replicaAcks;

	PreflightProbe(RedisConnectionFactory connectionFactory, String keyPrefix, String key, String channel,
			int replicaAcks) {
		this.connectionFactory = connectionFactory;
		this.keyPrefix = keyPrefix;
		this.key = key;
		this.channel = channel;
		this.replicaAcks = replicaAcks;
	}

	/**
	 * Send the check's commands, stopping at the first finding after which nothing more can be learnt.
	 * @return what Redis refused, or the failure that kept it from being asked; empty when it allowed everything
	 */
	List<PreflightFinding> run() {
		List<PreflightFinding> findings = new ArrayList<>();
		RedisConnection connection;
		try {
			connection = connect();
		}
		catch (RuntimeException ex) {
			findings.add(finding("Connecting", ex));
			return findings;
		}
		byte[] key = bytes(this.key);
		byte[] channel = bytes(this.channel);
		// on a cluster the scripts announce releases on their shard too
		byte[] mode = bytes((connection instanceof RedisClusterConnection) ? "s" : "");
		try (connection) {
			try {
				List<?> refused = connection.scriptingCommands()
					.eval(bytes(LockPreflight.SCRIPT.getScriptAsString()), ReturnType.MULTI, 1, key, channel, mode);
				addScriptRefusals(refused, findings);
			}
			catch (RuntimeException ex) {
				if (add(findings, finding("EVAL of the lock scripts (key '" + this.key + "')", ex))) {
					return findings;
				}
			}
			try {
				connection.scriptingCommands()
					.evalSha(LockPreflight.SCRIPT.getSha1(), ReturnType.MULTI, 1, key, channel, mode);
			}
			catch (RuntimeException ex) {
				PreflightFinding evalsha = finding("EVALSHA of the lock scripts", ex);
				// NOSCRIPT: allowed to run, only the script was not cached (EVAL was refused, or evicted it)
				if (!evalsha.error().message().startsWith("NOSCRIPT") && add(findings, evalsha)) {
					return findings;
				}
			}
			try {
				connection.ping();
			}
			catch (RuntimeException ex) {
				if (add(findings, finding("PING (sent when the release subscription closes)", ex))) {
					return findings;
				}
			}
			try {
				connection.zSetCommands().zCard(key);
			}
			catch (RuntimeException ex) {
				if (add(findings, finding("ZCARD of a fair lock's queue (the locks endpoint's queue length)", ex))) {
					return findings;
				}
			}
			if (this.replicaAcks > 0) {
				checkWait(connection, findings);
			}
		}
		if (isLettuce(this.connectionFactory)) {
			checkSubscription(channel, findings);
		}
		return findings;
	}

	/**
	 * Connect, a second time when the first attempt looked like an unreachable Redis. A connection that closes during
	 * the handshake, after Redis read the credentials and before its answer arrived, fails in Lettuce as "Connection
	 * closed prematurely", not with the WRONGPASS that was on its way: taken for an unreachable Redis, a wrong password
	 * would start the application. The second answer counts; a Redis that is not there fails the same way twice (a
	 * refused connection in microseconds), and one that hangs is bounded by the check's timeout.
	 */
	private RedisConnection connect() {
		try {
			return this.connectionFactory.getConnection();
		}
		catch (RuntimeException ex) {
			if (RedisErrorClassifier.classify(ex).kind() != RedisErrorKind.UNAVAILABLE) {
				throw ex;
			}
			return this.connectionFactory.getConnection();
		}
	}

	/**
	 * {@code WAIT 0 0}, which returns at once: the engine sends {@code WAIT} after each new lease. Only a refusal is a
	 * finding; the reply is not read (clients without a reply type for it may fail to decode the integer).
	 */
	private void checkWait(RedisConnection connection, List<PreflightFinding> findings) {
		try {
			connection.execute("WAIT", bytes("0"), bytes("0"));
		}
		catch (RuntimeException ex) {
			PreflightFinding finding = finding("WAIT after each new lease (distlock.replica-acks=" + this.replicaAcks
					+ ")", ex);
			if (finding.error().kind() != RedisErrorKind.OTHER) {
				add(findings, finding);
			}
		}
	}

	/** SUBSCRIBE and UNSUBSCRIBE on a connection of its own, as the engine's release subscriber does. */
	private void checkSubscription(byte[] channel, List<PreflightFinding> findings) {
		try (RedisConnection subscriber = this.connectionFactory.getConnection()) {
			try {
				subscriber.subscribe((message, pattern) -> {
				}, channel);
			}
			catch (RuntimeException ex) {
				add(findings, finding("SUBSCRIBE to channel '" + this.channel + "'", ex));
				return;
			}
			try {
				if (subscriber.getSubscription() != null) {
					subscriber.getSubscription().unsubscribe();
				}
			}
			catch (RuntimeException ex) {
				add(findings, finding("UNSUBSCRIBE from channel '" + this.channel + "'", ex));
			}
		}
		catch (RuntimeException ex) {
			add(findings, finding("SUBSCRIBE to channel '" + this.channel + "'", ex));
		}
	}

	/** The script's {command, error, ...} pairs: a denial inside a script does not name its command in Redis 7.0. */
	private void addScriptRefusals(@Nullable List<?> refused, List<PreflightFinding> findings) {
		if (refused == null) {
			return;
		}
		for (int i = 0; i + 1 < refused.size(); i += 2) {
			String command = string(refused.get(i));
			RedisError error = RedisErrorClassifier.classify(string(refused.get(i + 1)));
			String check = command.toUpperCase(Locale.ROOT) + " inside the lock scripts";
			Refusal refusal = error.refusal();
			if (refusal != null) {
				Refusal named = switch (refusal.target()) {
					case COMMAND -> new Refusal(Target.COMMAND, command);
					case KEY -> new Refusal(Target.KEY, (refusal.name() != null) ? refusal.name() : this.key);
					case CHANNEL ->
						new Refusal(Target.CHANNEL, (refusal.name() != null) ? refusal.name() : this.channel);
				};
				error = new RedisError(error.kind(), named, error.message());
				check += switch (refusal.target()) {
					case COMMAND -> "";
					case KEY -> ", on key '" + named.name() + "'";
					case CHANNEL -> ", on channel '" + named.name() + "'";
				};
			}
			findings.add(finding(check, error));
		}
	}

	/**
	 * The finding of a check that failed with {@code failure}, with the ACL rule to grant when Redis refused it.
	 * @param check what was checked, as the texts name it
	 * @param failure what the check threw
	 * @return the finding
	 */
	PreflightFinding finding(String check, Throwable failure) {
		return finding(check, RedisErrorClassifier.classify(failure));
	}

	private PreflightFinding finding(String check, RedisError error) {
		Refusal refusal = error.refusal();
		return new PreflightFinding(check, error, (refusal != null) ? refusal.grant(this.keyPrefix) : null);
	}

	/** Add the finding; true when the check cannot go on (no connection to speak of, or it hangs). */
	private static boolean add(List<PreflightFinding> findings, PreflightFinding finding) {
		findings.add(finding);
		RedisErrorKind kind = finding.error().kind();
		return kind == RedisErrorKind.AUTHENTICATION || kind == RedisErrorKind.TLS || kind == RedisErrorKind.UNAVAILABLE;
	}

	private static boolean isLettuce(RedisConnectionFactory connectionFactory) {
		for (Class<?> type = connectionFactory.getClass(); type != null; type = type.getSuperclass()) {
			if (type.getName().equals("org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory")) {
				return true;
			}
		}
		return false;
	}

	private static String string(Object value) {
		return (value instanceof byte[] raw) ? new String(raw, StandardCharsets.UTF_8) : String.valueOf(value);
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
