package dev.distlock.preflight;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.preflight.PreflightReport.Outcome;
import dev.distlock.preflight.Refusal.Target;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.Assert;

/**
 * Checks once, with a deadline, that the application's Redis user may do everything the lock engine does, so that a
 * missing ACL permission shows at startup instead of as the first failing lock: it authenticates, runs every command
 * of the engine's scripts through {@code EVAL} and {@code EVALSHA} on a key under the lock prefix (Redis checks the ACL
 * of each command a script calls, one by one, as it runs), publishes and subscribes on a channel under the prefix, and
 * sends the commands the engine sends outside its scripts ({@link #ENGINE_COMMANDS}).
 * <p>
 * One round of a few commands: one script call runs each command under {@code redis.pcall}, so a single call finds
 * every refused command. The key {@code <prefix>:__preflight__} (see {@link #key()}: never a lock's) exists only while
 * the script runs; nothing else is written. The subscription is checked on Lettuce only (other clients block the
 * caller while subscribed).
 *
 * @since 0.1.0
 */
public final class LockPreflight {

	/**
	 * The commands the engine sends itself: scripts (EVAL when Redis lost its script cache), subscriptions, the
	 * {@code PING} that Spring Data Redis's Lettuce subscription sends after its {@code UNSUBSCRIBE} when it closes (at
	 * shutdown), and {@code ZCARD} of a fair lock's queue for the operator view ({@code fairQueueLength}, the
	 * {@code locks} endpoint's {@code queueLength}).
	 */
	public static final List<String> ENGINE_COMMANDS = List.of("evalsha", "eval", "subscribe", "unsubscribe", "ping",
			"zcard");

	/**
	 * The commands the engine's Lua scripts call; Redis checks each against the ACL as the script runs. The sorted-set
	 * commands are the fair locks' queue ({@code LockMode.FAIR}); {@code SCAN} is the listing of every lock in the
	 * store ({@code LockDirectory}, {@code GET /actuator/locks/all}).
	 */
	public static final List<String> SCRIPT_COMMANDS = List.of("exists", "time", "hset", "hsetnx", "hmget", "hget",
			"hexists", "hincrby", "hgetall", "hdel", "pttl", "pexpire", "del", "set", "get", "publish", "zadd", "zscore",
			"zrank", "zrange", "zrangebyscore", "zrem", "scan");

	/**
	 * What the engine needs besides on a Redis Cluster through Lettuce, where releases are announced and heard on their
	 * key's shard: {@code SPUBLISH} in the scripts, {@code SSUBSCRIBE}/{@code SUNSUBSCRIBE} by the subscriber.
	 */
	public static final List<String> CLUSTER_COMMANDS = List.of("spublish", "ssubscribe", "sunsubscribe");

	/**
	 * What the engine needs besides with replica acknowledgements ({@code distlock.replica-acks} above 0):
	 * {@code WAIT} after each new lease, on the connection that acquired it.
	 * @since 0.7.0
	 */
	public static final List<String> REPLICA_ACK_COMMANDS = List.of("wait");

	/**
	 * Calls each command of the engine's scripts on KEYS[1] (a key no lock uses) and publishes on ARGV[1], returning
	 * {command, error, ...} for each one refused. The key expires within 10 s should a refused HDEL and DEL leave it.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> SCRIPT = RedisScript.of("""
			local refused = {}
			local function try(command, ...)
			  local reply = redis.pcall(command, ...)
			  if type(reply) == 'table' and reply.err then
			    refused[#refused + 1] = command
			    refused[#refused + 1] = reply.err
			  end
			end
			try('exists', KEYS[1])
			try('time')
			try('hset', KEYS[1], '~preflight', 1)
			try('pexpire', KEYS[1], 10000)
			try('hsetnx', KEYS[1], '~preflight', 1)
			try('hmget', KEYS[1], '~preflight', '~t')
			try('hget', KEYS[1], '~preflight')
			try('hexists', KEYS[1], '~preflight')
			try('hincrby', KEYS[1], '~preflight', 1)
			try('hgetall', KEYS[1])
			try('pttl', KEYS[1])
			try('hdel', KEYS[1], '~preflight')
			try('del', KEYS[1])
			try('zadd', KEYS[1], 1, '~preflight')
			redis.pcall('pexpire', KEYS[1], 10000)
			try('zscore', KEYS[1], '~preflight')
			try('zrank', KEYS[1], '~preflight')
			try('zrange', KEYS[1], 0, 0)
			try('zrangebyscore', KEYS[1], '-inf', 0)
			try('zrem', KEYS[1], '~preflight')
			redis.pcall('del', KEYS[1])
			try('set', KEYS[1], 'preflight', 'px', 10000)
			try('get', KEYS[1])
			redis.pcall('del', KEYS[1])
			try('scan', 0, 'match', KEYS[1], 'count', 1)
			try('publish', ARGV[1], 'preflight')
			if ARGV[2] == 's' then
			  try('spublish', ARGV[1], 'preflight')
			end
			return refused
			""", List.class);

	private final RedisConnectionFactory connectionFactory;

	private final String keyPrefix;

	private final Duration timeout;

	private final String server;

	private final String user;

	/** Replicas that must acknowledge a new lease; above 0, the check sends {@code WAIT} as well. */
	private final int replicaAcks;

	/**
	 * A check of what {@code connectionFactory}'s Redis user may do, for a lock service without replica
	 * acknowledgements.
	 * @param connectionFactory the connection factory of the lock service
	 * @param keyPrefix the lock service's key prefix: keys {@code <prefix>:{<key>}}, channels
	 * {@code <prefix>:{<key>}:released}
	 * @param timeout how long the whole check may take; a Redis that does not answer within it is taken as unavailable
	 * @param server the server as the texts name it, such as {@code Redis at 127.0.0.1:6379}
	 * @param user the ACL user the application authenticates as, or {@code null} for the default user
	 */
	public LockPreflight(RedisConnectionFactory connectionFactory, String keyPrefix, Duration timeout, String server,
			@Nullable String user) {
		this(connectionFactory, keyPrefix, timeout, server, user, 0);
	}

	/**
	 * A check of what {@code connectionFactory}'s Redis user may do, {@code WAIT} included when the lock service waits
	 * for replica acknowledgements.
	 * @param connectionFactory the connection factory of the lock service
	 * @param keyPrefix the lock service's key prefix: keys {@code <prefix>:{<key>}}, channels
	 * {@code <prefix>:{<key>}:released}
	 * @param timeout how long the whole check may take; a Redis that does not answer within it is taken as unavailable
	 * @param server the server as the texts name it, such as {@code Redis at 127.0.0.1:6379}
	 * @param user the ACL user the application authenticates as, or {@code null} for the default user
	 * @param replicaAcks the replicas that must acknowledge a new lease ({@code distlock.replica-acks}); 0 for none
	 * @since 0.7.0
	 */
	public LockPreflight(RedisConnectionFactory connectionFactory, String keyPrefix, Duration timeout, String server,
			@Nullable String user, int replicaAcks) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		Assert.hasText(keyPrefix, "'keyPrefix' must not be blank");
		Assert.isTrue(timeout != null && !timeout.isNegative() && !timeout.isZero(), "'timeout' must be positive");
		Assert.hasText(server, "'server' must not be blank");
		Assert.isTrue(replicaAcks >= 0, "'replicaAcks' must not be negative");
		this.connectionFactory = connectionFactory;
		this.keyPrefix = keyPrefix;
		this.timeout = timeout;
		this.replicaAcks = replicaAcks;
		this.user = (user != null && !user.isBlank()) ? user : "default";
		this.server = server + " as user '" + this.user + "'";
	}

	/**
	 * The minimal ACL rules of a lock service with key prefix {@code keyPrefix}: its keys, its channels, and only the
	 * commands the engine and its scripts run.
	 * @param keyPrefix the lock service's key prefix
	 * @return the ACL rules, as ACL SETUSER takes them
	 */
	public static String minimalAcl(String keyPrefix) {
		StringBuilder acl = new StringBuilder("~").append(keyPrefix).append(":* &").append(keyPrefix).append(":* -@all");
		ENGINE_COMMANDS.forEach(command -> acl.append(" +").append(command));
		SCRIPT_COMMANDS.forEach(command -> acl.append(" +").append(command));
		return acl.toString();
	}

	/**
	 * The minimal ACL rules of a lock service with key prefix {@code keyPrefix} whose new leases {@code replicaAcks}
	 * replicas must acknowledge: {@link #minimalAcl(String)}, and {@link #REPLICA_ACK_COMMANDS} when
	 * {@code replicaAcks} is above 0.
	 * @param keyPrefix the lock service's key prefix
	 * @param replicaAcks the replicas that must acknowledge a new lease ({@code distlock.replica-acks})
	 * @return the ACL rules, as ACL SETUSER takes them
	 * @since 0.7.0
	 */
	public static String minimalAcl(String keyPrefix, int replicaAcks) {
		StringBuilder acl = new StringBuilder(minimalAcl(keyPrefix));
		if (replicaAcks > 0) {
			REPLICA_ACK_COMMANDS.forEach(command -> acl.append(" +").append(command));
		}
		return acl.toString();
	}

	/**
	 * The minimal ACL rules on a Redis Cluster (through Lettuce, Redis 7.0 or later): {@link #minimalAcl(String)} and
	 * the sharded pub/sub commands ({@link #CLUSTER_COMMANDS}).
	 * @param keyPrefix the lock service's key prefix
	 * @return the ACL rules, as ACL SETUSER takes them
	 */
	public static String minimalClusterAcl(String keyPrefix) {
		StringBuilder acl = new StringBuilder(minimalAcl(keyPrefix));
		CLUSTER_COMMANDS.forEach(command -> acl.append(" +").append(command));
		return acl.toString();
	}

	/**
	 * The key the check's script touches, {@code <prefix>:__preflight__}: under the lock prefix (so under the ACL's key
	 * pattern), and no key of a lock: every key the engine writes is a lease {@code <prefix>:{<key>}} or a key named
	 * after one, so it has a brace right after the prefix, whatever the lock key. A lock named {@code __preflight__}
	 * that another instance holds is never touched.
	 * @return the key
	 */
	public String key() {
		return this.keyPrefix + ":__preflight__";
	}

	/**
	 * The channel the check publishes and subscribes on: the key's name, which no release channel has (theirs have a
	 * brace right after the prefix, as the keys do), so no waiter hears the check; the same name puts it in the key's
	 * hash slot, as a script's {@code SPUBLISH} on a Redis Cluster must be.
	 * @return the channel
	 */
	public String channel() {
		return key();
	}

	/**
	 * Run the check on a thread of its own and wait for it at most the timeout. Never throws.
	 * @return what the check found
	 */
	public PreflightReport check() {
		FutureTask<PreflightReport> task = new FutureTask<>(this::checkNow);
		Thread thread = new Thread(task, "distlock-preflight");
		thread.setDaemon(true);
		thread.start();
		try {
			return task.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			task.cancel(true);
			return report(List.of(new PreflightFinding("Waiting for Redis", new RedisError(RedisErrorKind.UNAVAILABLE,
					null, "no answer within " + this.timeout.toMillis() + " ms (distlock.preflight.timeout)"), null)));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			task.cancel(true);
			return report(List.of(new PreflightFinding("Waiting for Redis",
					new RedisError(RedisErrorKind.UNAVAILABLE, null, "interrupted"), null)));
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			return report(List.of(finding("Checking", cause)));
		}
	}

	private PreflightReport checkNow() {
		List<PreflightFinding> findings = new ArrayList<>();
		RedisConnection connection;
		try {
			connection = connect();
		}
		catch (RuntimeException ex) {
			findings.add(finding("Connecting", ex));
			return report(findings);
		}
		byte[] key = bytes(key());
		byte[] channel = bytes(channel());
		// on a cluster the scripts announce releases on their shard too
		byte[] mode = bytes((connection instanceof RedisClusterConnection) ? "s" : "");
		try (connection) {
			try {
				List<?> refused = connection.scriptingCommands().eval(bytes(SCRIPT.getScriptAsString()),
						ReturnType.MULTI, 1, key, channel, mode);
				addScriptRefusals(refused, findings);
			}
			catch (RuntimeException ex) {
				if (add(findings, finding("EVAL of the lock scripts (key '" + key() + "')", ex))) {
					return report(findings);
				}
			}
			try {
				connection.scriptingCommands().evalSha(SCRIPT.getSha1(), ReturnType.MULTI, 1, key, channel, mode);
			}
			catch (RuntimeException ex) {
				PreflightFinding evalsha = finding("EVALSHA of the lock scripts", ex);
				// NOSCRIPT: allowed to run, only the script was not cached (EVAL was refused, or evicted it)
				if (!evalsha.error().message().startsWith("NOSCRIPT") && add(findings, evalsha)) {
					return report(findings);
				}
			}
			try {
				connection.ping();
			}
			catch (RuntimeException ex) {
				if (add(findings, finding("PING (sent when the release subscription closes)", ex))) {
					return report(findings);
				}
			}
			try {
				connection.zSetCommands().zCard(key);
			}
			catch (RuntimeException ex) {
				if (add(findings, finding("ZCARD of a fair lock's queue (the locks endpoint's queue length)", ex))) {
					return report(findings);
				}
			}
			if (this.replicaAcks > 0) {
				checkWait(connection, findings);
			}
		}
		if (isLettuce(this.connectionFactory)) {
			checkSubscription(channel, findings);
		}
		return report(findings);
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
				add(findings, finding("SUBSCRIBE to channel '" + channel() + "'", ex));
				return;
			}
			try {
				if (subscriber.getSubscription() != null) {
					subscriber.getSubscription().unsubscribe();
				}
			}
			catch (RuntimeException ex) {
				add(findings, finding("UNSUBSCRIBE from channel '" + channel() + "'", ex));
			}
		}
		catch (RuntimeException ex) {
			add(findings, finding("SUBSCRIBE to channel '" + channel() + "'", ex));
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
					case KEY -> new Refusal(Target.KEY, (refusal.name() != null) ? refusal.name() : key());
					case CHANNEL -> new Refusal(Target.CHANNEL, (refusal.name() != null) ? refusal.name() : channel());
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

	private PreflightFinding finding(String check, Throwable failure) {
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

	private PreflightReport report(List<PreflightFinding> findings) {
		Outcome outcome = Outcome.PASSED;
		for (PreflightFinding finding : findings) {
			if (finding.error().kind() != RedisErrorKind.UNAVAILABLE) {
				outcome = Outcome.FAILED;
				break;
			}
			outcome = Outcome.UNAVAILABLE;
		}
		return new PreflightReport(outcome, this.server, this.user, this.keyPrefix, findings);
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
