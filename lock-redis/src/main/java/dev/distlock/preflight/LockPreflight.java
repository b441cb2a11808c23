package dev.distlock.preflight;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.preflight.PreflightReport.Outcome;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
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

	private final String keyPrefix;

	private final Duration timeout;

	private final String server;

	private final String user;

	/** The commands the check sends; this class adds the deadline and the report. */
	private final PreflightProbe probe;

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
		this.keyPrefix = keyPrefix;
		this.timeout = timeout;
		this.user = (user != null && !user.isBlank()) ? user : "default";
		this.server = server + " as user '" + this.user + "'";
		this.probe = new PreflightProbe(connectionFactory, keyPrefix, key(), channel(), replicaAcks);
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
		FutureTask<PreflightReport> task = new FutureTask<>(() -> report(this.probe.run()));
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
			return report(List.of(this.probe.finding("Checking", cause)));
		}
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

}
