package dev.distlock.redis.internal.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.NativeScriptArgs;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.ClassUtils;

/**
 * The engine's door to Redis for lease operations: one script call per operation. The batched renewals are
 * {@link RenewalBatches}' (given by {@link #renewals()}), on the same connection factory and template.
 * <p>
 * Every failure reaches the caller as Spring's {@code DataAccessException}: the template translates its own, and the
 * Lettuce-native shortcut ({@link NativeScripts}, where a script runs when it can skip the template) translates
 * Lettuce's the same way.
 */
public final class LeaseStore {

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent(ClientTypes.LETTUCE_TYPE,
			LeaseStore.class.getClassLoader());

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate template;

	private final long timeoutMillis;

	/**
	 * {@link LockScripts#SHARDED} when releases are announced on their shard (a Redis Cluster, whatever the client; its
	 * subscriber subscribes each channel on its shard, see {@code dev.distlock.redis.internal.pubsub.ShardedSubscriptions}), else empty: classic
	 * {@code PUBLISH}.
	 */
	private final String publishMode;

	/** The renewals of this store's leases, batched. */
	private final RenewalBatches renewals;

	/** The fair-lock scripts, on the same template. */
	private final FairStore fair;

	/** The read-write locks' calls, on this store. */
	private final ReadWriteStore readWrite = new ReadWriteStore(this);

	/** The Lettuce-native shortcut of the lease scripts; each of its calls answers null where it does not apply. */
	private final NativeScripts nativeScripts;

	/** The arguments of ACQUIRE and RELEASE, encoded for the native path. */
	private final NativeScriptArgs nativeArgs;

	/**
	 * A store on the engine's default path ({@code EnginePaths.DEFAULT}): the Lettuce-native shortcut where the
	 * connections are Lettuce's.
	 * @param connectionFactory the connections to Redis
	 */
	public LeaseStore(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, true);
	}

	/**
	 * A store whose lease scripts and renewals take the Lettuce-native shortcut when {@code nativeScripts} and the
	 * connections are Lettuce's, else go through the template only (Spring's exception translation on every call).
	 * @param connectionFactory the connections to Redis
	 * @param nativeScripts whether the Lettuce-native shortcut may be taken
	 */
	public LeaseStore(RedisConnectionFactory connectionFactory, boolean nativeScripts) {
		this.connectionFactory = connectionFactory;
		this.template = new StringRedisTemplate(connectionFactory);
		this.template.afterPropertiesSet();
		this.timeoutMillis = LETTUCE_PRESENT ? LettuceScripts.timeoutMillis(connectionFactory) : 0;
		this.nativeScripts = new NativeScripts(connectionFactory, this.timeoutMillis, LETTUCE_PRESENT && nativeScripts);
		this.renewals = new RenewalBatches(connectionFactory, this.template, LETTUCE_PRESENT && nativeScripts);
		this.publishMode = isSharded(connectionFactory) ? LockScripts.SHARDED : "";
		this.nativeArgs = new NativeScriptArgs(this.publishMode);
		this.fair = new FairStore(this, this.template, this.publishMode);
	}

	/** {@return a scan of this store's lease keys under {@code keyPrefix}, on every master of a Cluster} */
	public StoreScan scan(String keyPrefix) {
		return new StoreScan(this.connectionFactory, this.template, keyPrefix, !this.publishMode.isEmpty());
	}

	/** {@return the fair-lock scripts on this store} */
	public FairStore fair() {
		return this.fair;
	}

	/** {@return the calls of read-write leases on this store} */
	public ReadWriteStore readWrite() {
		return this.readWrite;
	}

	/** {@return {@link LockScripts#SHARDED} when releases are announced on their shard, else empty} */
	public String publishMode() {
		return this.publishMode;
	}

	/** Any lease script on one key with string arguments: the Lettuce-native shortcut where it applies, else the template. */
	public @Nullable Object run(RedisScript<?> script, String redisKey, String... args) {
		return run(script, List.of(redisKey), args);
	}

	/** As {@link #run(RedisScript, String, String...)}, on several keys of one hash slot (the fair scripts'). */
	public @Nullable Object run(RedisScript<?> script, List<String> redisKeys, String... args) {
		Object nativeReply = this.nativeScripts.enabled()
				? this.nativeScripts.run(script, redisKeys, NativeScriptArgs.encode(args)) : null;
		return (nativeReply != null) ? nativeReply : this.template.execute(script, redisKeys, (Object[]) args);
	}

	/** {@return the batched renewals of leases on this store's connection factory} */
	public RenewalBatches renewals() {
		return this.renewals;
	}

	/**
	 * Whether releases on {@code connectionFactory} are announced with sharded pub/sub: a Redis Cluster, whatever the
	 * client (see {@link ReleaseTopology}; the subscriber and the scripts both fall back to classic pub/sub on Redis
	 * before 7.0).
	 */
	public static boolean isSharded(RedisConnectionFactory connectionFactory) {
		return ReleaseTopology.isCluster(connectionFactory);
	}

	/**
	 * {hold count, token, 0} when acquired or re-entered; {0, holder's remaining ttl in ms, unannounced} when another
	 * owner holds it, and then, if {@code waiter} is a client id, the lease notes that this client waits; {-1, 0, 0}
	 * when the re-entry of the lease with {@code reenteredToken} (0 for a new acquisition) finds it gone. A re-entry
	 * raises the count in Redis to {@code reentryTarget} ({@code LeaseEntry.reentryTarget}; 0 for a new acquisition),
	 * so that it counts once however often it runs. Unannounced is 1 when the holder's release will not be announced
	 * ({@link LockScripts#UNANNOUNCED_FIELD}): a waiter then polls ({@link #unannounced}). {@code label} is the holder's
	 * label that a new hold is stored with ('' for a re-entry, which never writes one).
	 */
	public long[] acquire(String redisKey, String owner, long ttlMillis, String waiter, long reenteredToken,
			long reentryTarget, String label) {
		Object nativeReply = this.nativeScripts.enabled()
				? this.nativeScripts.run(LockScripts.ACQUIRE, List.of(redisKey),
						this.nativeArgs.acquire(owner, ttlMillis, waiter, reenteredToken, reentryTarget, label))
				: null;
		List<?> reply = (nativeReply != null) ? (List<?>) nativeReply
				: this.template.execute(LockScripts.ACQUIRE, List.of(redisKey), owner, Long.toString(ttlMillis), waiter,
						(reenteredToken != 0) ? Long.toString(reenteredToken) : "",
						(reentryTarget > 0) ? Long.toString(reentryTarget) : "", this.publishMode, label);
		return acquired(reply);
	}

	/** ACQUIRE's reply, {holds, token or holder's ttl} or {0, holder's ttl, 1}, as {holds, second, unannounced}. */
	public static long[] acquired(@Nullable List<?> reply) {
		if (reply == null || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the acquire script: " + reply);
		}
		return new long[] { ((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
				(reply.size() > 2) ? ((Number) reply.get(2)).longValue() : 0 };
	}

	/**
	 * Whether an acquisition's reply ({@link #acquire}) says that the holder's release will not be announced, so a
	 * waiter must poll: the holder's user may not publish on the release channel.
	 */
	public static boolean unannounced(long[] reply) {
		return reply.length > 2 && reply[2] == 1;
	}

	/**
	 * {@link #acquire} without waiting for Redis, on Lettuce's asynchronous commands: null when that path is not
	 * available (another client, the template path, or connections that do not share one native connection); the
	 * caller then calls {@link #acquire} on a thread of its own. The future completes on Lettuce's threads.
	 */
	public @Nullable CompletableFuture<long[]> acquireAsync(String redisKey, String owner, long ttlMillis, String waiter,
			long reenteredToken, String label) {
		CompletableFuture<Object> reply = runNativeAsync(LockScripts.ACQUIRE, redisKey,
				this.nativeArgs.acquire(owner, ttlMillis, waiter, reenteredToken, 0, label));
		return (reply != null) ? reply.thenApply(value -> acquired((List<?>) value)) : null;
	}

	/** {@link #release} without waiting for Redis, as {@link #acquireAsync}: null when that path is not available. */
	public @Nullable CompletableFuture<Released> releaseAsync(String redisKey, String owner, long token, String channel,
			String clientId, long holdsBefore, long ttlMillis) {
		CompletableFuture<Object> reply = runNativeAsync(LockScripts.RELEASE, redisKey,
				this.nativeArgs.release(owner, token, channel, clientId, holdsBefore, receiptMillis(ttlMillis)));
		return (reply != null) ? reply.thenApply(value -> released((List<?>) value)) : null;
	}

	/** A lease script on Lettuce's asynchronous commands (see {@link #acquireAsync}); null when not available. */
	public @Nullable CompletableFuture<Object> runNativeAsync(RedisScript<?> script, String redisKey, byte[][] argv) {
		return this.nativeScripts.runAsync(script, redisKey, argv);
	}

	/**
	 * A new acquisition as {@link #acquire}, followed, when it acquired, by {@code WAIT replicas timeoutMillis} on the
	 * same connection (WAIT counts the replicas that acknowledged this connection's writes, so it must follow the
	 * script on its connection): {holds, token or holder's ttl, replicas that acknowledged (0 when not acquired),
	 * unannounced (as for {@link #acquire})}. On a cluster connection both go to the key's master on one node
	 * connection (Lettuce only).
	 */
	public long[] acquireReplicated(String redisKey, String owner, long ttlMillis, String waiter, String label, int replicas,
			long timeoutMillis) {
		byte[][] keyAndArgs = { bytes(redisKey), bytes(owner), bytes(Long.toString(ttlMillis)), bytes(waiter),
				bytes(""), bytes(""), bytes(this.publishMode), bytes(label) };
		long[] result = this.template.execute((RedisCallback<long[]>) connection -> {
			if (connection instanceof RedisClusterConnection) {
				long[] onMaster = LETTUCE_PRESENT ? LettuceWait.onKeysMaster(connection, LockScripts.ACQUIRE,
						keyAndArgs[0], Arrays.copyOfRange(keyAndArgs, 1, keyAndArgs.length), replicas, timeoutMillis,
						this.timeoutMillis) : null;
				if (onMaster == null) {
					throw new IllegalStateException("Replica acknowledgements (distlock.replica-acks) on Redis Cluster "
							+ "need Lettuce's cluster connection");
				}
				return onMaster;
			}
			long[] reply = acquired(evalOnConnection(connection, LockScripts.ACQUIRE, keyAndArgs));
			long holds = reply[0];
			long second = reply[1];
			if (holds <= 0) {
				return new long[] { holds, second, 0, reply[2] };
			}
			byte[] count = bytes(Integer.toString(replicas));
			byte[] timeout = bytes(Long.toString(timeoutMillis));
			Object acked = LETTUCE_PRESENT ? LettuceWait.replicas(connection, count, timeout) : null;
			if (acked == null) {
				acked = connection.execute("WAIT", count, timeout);
			}
			return new long[] { holds, second, (acked instanceof Number number) ? number.longValue() : 0, 0 };
		}, true); // the connection itself, not a proxy: WAIT needs Lettuce's own execute
		if (result == null) {
			throw new IllegalStateException("No reply from the acquire script");
		}
		return result;
	}

	/** EVALSHA on this connection, EVAL once when Redis does not have the script cached. */
	private static @Nullable List<?> evalOnConnection(RedisConnection connection, RedisScript<?> script,
			byte[][] keyAndArgs) {
		try {
			return connection.scriptingCommands().evalSha(script.getSha1(), ReturnType.MULTI, 1, keyAndArgs);
		}
		catch (RuntimeException ex) {
			if (!RedisFailures.isNoScript(ex)) {
				throw ex;
			}
			return connection.scriptingCommands().eval(bytes(script.getScriptAsString()), ReturnType.MULTI, 1,
					keyAndArgs);
		}
	}

	/** What the release script did. */
	public record Released(long holdsLeft, boolean othersWaiting, @Nullable String publishRefused) {

		/** The lease was not ours. */
		public boolean notOurs() {
			return this.holdsLeft < 0;
		}

	}

	/**
	 * Holds left, or -1 when the lease is not ours; whether another process noted that it waits; and Redis's error
	 * when it refused to publish the release (the lease is released all the same). {@code holdsBefore} is what the
	 * owner counts before this release ({@link StoredLease#holdsBeforeRelease}), {@code ttlMillis} the lease time, which
	 * bounds how long the receipt of a last release lasts (see {@link #receiptMillis}).
	 */
	public Released release(String redisKey, String owner, long token, String channel, String clientId, long holdsBefore,
			long ttlMillis) {
		long receipt = receiptMillis(ttlMillis);
		Object nativeReply = this.nativeScripts.enabled()
				? this.nativeScripts.run(LockScripts.RELEASE, List.of(redisKey),
						this.nativeArgs.release(owner, token, channel, clientId, holdsBefore, receipt))
				: null;
		List<?> reply = (nativeReply != null) ? (List<?>) nativeReply
				: this.template.execute(LockScripts.RELEASE, List.of(redisKey), owner, Long.toString(token), channel,
						clientId, this.publishMode, Long.toString(holdsBefore), Long.toString(receipt));
		return released(reply);
	}

	/** {@return how long the receipt of a last release lasts, see {@link Receipts#millis}} */
	public long receiptMillis(long ttlMillis) {
		return Receipts.millis(this.timeoutMillis, ttlMillis);
	}

	private static Released released(@Nullable List<?> reply) {
		if (reply == null || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the release script: " + reply);
		}
		return new Released(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue() == 1,
				(reply.size() == 3) ? text(reply.get(2)) : null);
	}

	/** A string in a script's reply: a {@code String} through the template, bytes through Lettuce's own codec. */
	public static String text(@Nullable Object value) {
		return (value instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
	}

	/**
	 * The next holder's token; -1 when the lease is not ours, -2 when the owner holds it more than once. The lease
	 * then names the next holder by {@code nextLabel}.
	 */
	public long handOver(String redisKey, String owner, long token, String nextOwner, long nextTtlMillis, String nextLabel) {
		Object nativeReply = this.nativeScripts.run(LockScripts.HAND_OVER, redisKey, owner, Long.toString(token),
				nextOwner, Long.toString(nextTtlMillis), nextLabel);
		if (nativeReply != null) {
			return (Long) nativeReply;
		}
		return nonNull(this.template.execute(LockScripts.HAND_OVER, List.of(redisKey), owner, Long.toString(token),
				nextOwner, Long.toString(nextTtlMillis), nextLabel));
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/** The kept commands of the shared native connection the next native call would use, or null (for tests). */
	public @Nullable Object keptCommands() {
		return this.nativeScripts.keptCommands();
	}

	/** The connection factory's command timeout in ms where known (Lettuce), else 0. */
	public long commandTimeoutMillis() {
		return this.timeoutMillis;
	}

	/**
	 * The new remaining ttl in ms, or -1 when the lease is not ours. An {@code add} carries a fresh call id, so that it
	 * adds once however often it runs (see {@link LockScripts#EXTEND}).
	 */
	public long extend(String redisKey, String owner, long token, long millis, boolean add) {
		return nonNull(this.template.execute(LockScripts.EXTEND, List.of(redisKey), owner, Long.toString(token),
				Long.toString(millis), add ? "add" : "set", add ? Receipts.callId() : ""));
	}


	/** What the lease at {@code redisKey} holds; null when the key is free. */
	public @Nullable Held holder(String redisKey) {
		List<?> reply = this.template.execute(LockScripts.HOLDER, List.of(redisKey));
		if (reply == null || reply.isEmpty()) {
			return null;
		}
		if (reply.size() != 4) {
			throw new IllegalStateException("Unexpected reply from the holder script: " + reply);
		}
		String labels = text(reply.get(3));
		return new Held(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
				((Number) reply.get(2)).longValue(), labels.isEmpty() ? null : labels);
	}

	/**
	 * A lease as {@link LockScripts#HOLDER} read it.
	 * @param holds the holds of its owners (0: only notes of waiting processes)
	 * @param token its fencing token
	 * @param pttl its remaining time in ms
	 * @param labels its holders' labels, joined as {@link LockScripts#LABELS} does, or null when none has one
	 */
	public record Held(long holds, long token, long pttl, @Nullable String labels) {
	}

	/** The remaining ttl in ms of the lease when it is still {@code owner}'s with {@code token}, else -1. */
	public long owned(String redisKey, String owner, long token) {
		return nonNull(this.template.execute(LockScripts.OWNED, List.of(redisKey), owner, Long.toString(token)));
	}

	/** Delete the lease if {@code owner} holds it (a hold the client does not know); true if there was one. */
	public boolean discard(String redisKey, String owner, String channel) {
		// ReadWriteScripts.DISCARD: the whole lease of an exclusive owner, only this owner's hold on a read-write one
		Object nativeReply = this.nativeScripts.run(ReadWriteScripts.DISCARD, redisKey, owner, channel,
				this.publishMode);
		long deleted = (nativeReply != null) ? (Long) nativeReply
				: nonNull(this.template.execute(ReadWriteScripts.DISCARD, List.of(redisKey), owner, channel,
						this.publishMode));
		return deleted == 1;
	}

	/**
	 * The deleted lease's hash as field, value pairs; empty when there was no lease. The call carries a fresh id, and
	 * its second run answers from the first one's receipt (see {@link LockScripts#FORCE_RELEASE}).
	 */
	public List<?> forceRelease(String redisKey, String channel) {
		List<?> reply = this.template.execute(LockScripts.FORCE_RELEASE, List.of(redisKey), channel, this.publishMode,
				Receipts.callId(), Long.toString(receiptMillis(Long.MAX_VALUE)));
		return (reply != null) ? reply : List.of();
	}

	private static long nonNull(Long value) {
		if (value == null) {
			throw new IllegalStateException("No reply from a lease script");
		}
		return value;
	}

}
