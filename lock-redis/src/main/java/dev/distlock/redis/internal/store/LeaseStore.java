package dev.distlock.redis.internal.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.NativeScriptArgs;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The engine's door to Redis for lease operations: one script call per operation. The batched renewals are
 * {@link RenewalBatches}' (given by {@link #renewals()}), on the same connection factory and template.
 * <p>
 * Every failure reaches the caller as Spring's {@code DataAccessException}: the template translates its own, and the
 * Lettuce-native shortcut ({@link NativeScripts}, where a script runs when it can skip the template) translates
 * Lettuce's the same way.
 */
public final class LeaseStore {

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate template;

	private final long timeoutMillis;

	/**
	 * {@link LockScripts#SHARDED} when releases are announced on their shard (a Redis Cluster, whatever the client; its
	 * subscriber subscribes each channel on its shard, see the pub/sub layer's {@code ShardedSubscriptions}), else
	 * empty: classic {@code PUBLISH}.
	 */
	private final String publishMode;

	/** The renewals of this store's leases, batched. */
	private final RenewalBatches renewals;

	/** The fair-lock scripts, on the same template. */
	private final FairStore fair;

	/** The read-write locks' calls, on this store. */
	private final ReadWriteStore readWrite = new ReadWriteStore(this, ReadWriteStore.Scripts.READ_WRITE);

	private final ReadWriteStore permits = new ReadWriteStore(this, ReadWriteStore.Scripts.PERMITS);

	/** The Lettuce-native shortcut of the lease scripts; each of its calls answers null where it does not apply. */
	private final NativeScripts nativeScripts;

	/** The arguments of ACQUIRE and RELEASE, encoded for the native path. */
	private final NativeScriptArgs nativeArgs;

	/**
	 * A store on the engine's default path ({@code EnginePaths.DEFAULT}): Lettuce-native where the client is Lettuce.
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
		this.timeoutMillis = ClientTypes.LETTUCE_PRESENT ? LettuceScripts.timeoutMillis(connectionFactory) : 0;
		boolean lettuceNative = ClientTypes.LETTUCE_PRESENT && nativeScripts;
		this.nativeScripts = new NativeScripts(connectionFactory, this.timeoutMillis, lettuceNative);
		this.renewals = new RenewalBatches(connectionFactory, this.template, lettuceNative);
		this.publishMode = ReleaseTopology.isCluster(connectionFactory) ? LockScripts.SHARDED : "";
		this.nativeArgs = new NativeScriptArgs(this.publishMode);
		this.fair = new FairStore(this, this.template, this.publishMode);
	}

	/**
	 * {@return a scan of this store's lease keys under {@code keyPrefix}, on every master of a Cluster}
	 * @param keyPrefix the prefix of the service's keys
	 */
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

	/** {@return the calls of a semaphore's permits on this store (the read-write calls with the permits' scripts)} */
	public ReadWriteStore permits() {
		return this.permits;
	}

	/** {@return {@link LockScripts#SHARDED} when releases are announced on their shard, else empty} */
	String publishMode() {
		return this.publishMode;
	}

	/**
	 * Any lease script on one key with string arguments: the Lettuce-native shortcut where it applies, else the template.
	 * @param script the script
	 * @param redisKey its one key
	 * @param args its arguments
	 * @return its reply, as the script gives it
	 */
	public @Nullable Object run(RedisScript<?> script, String redisKey, String... args) {
		return run(script, List.of(redisKey), args);
	}

	/**
	 * As {@link #run(RedisScript, String, String...)}, on several keys of one hash slot (the fair scripts').
	 * @param script the script
	 * @param redisKeys its keys, of one hash slot
	 * @param args its arguments
	 * @return its reply, as the script gives it
	 */
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
	 * {hold count, token, 0} when acquired or re-entered; {0, holder's remaining ttl in ms, unannounced} when another
	 * owner holds it, and then, if {@code waiter} is a client id, the lease notes that this client waits; {-1, 0, 0}
	 * when the re-entry of the lease with {@code reenteredToken} (0 for a new acquisition) finds it gone. A re-entry
	 * raises the count in Redis to {@code reentryTarget} ({@code LeaseEntry.reentryTarget}; 0 for a new acquisition),
	 * so that it counts once however often it runs. Unannounced is 1 when the holder's release will not be announced
	 * ({@link LockScripts#UNANNOUNCED_FIELD}): a waiter then polls ({@link #unannounced}). {@code label} is the holder's
	 * label that a new hold is stored with ('' for a re-entry, which never writes one). {@code waitedMillis}: how long
	 * the waiter's process has waited for the lock (its note's age, {@link LockScripts#ACQUIRE}'s ARGV[8]), else 0.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param ttlMillis the lease time in ms
	 * @param waiter the client id noted as waiting when refused, or empty
	 * @param waitedMillis how long the waiter's process has waited, in ms, or 0
	 * @param reenteredToken the token of the lease re-entered, 0 for a new acquisition
	 * @param reentryTarget the count a re-entry raises the holds to, 0 for a new acquisition
	 * @param label the holder's label a new hold is stored with, or empty
	 * @param carried notes of other processes a release carried over to this one (ARGV[9]), written into the lease
	 * @return {holds, token or holder's ttl, unannounced}
	 */
	public long[] acquire(String redisKey, String owner, long ttlMillis, String waiter, long waitedMillis,
			long reenteredToken, long reentryTarget, String label, String carried) {
		Object nativeReply = this.nativeScripts.enabled() ? this.nativeScripts.run(LockScripts.ACQUIRE,
				List.of(redisKey), this.nativeArgs.acquire(owner, ttlMillis, waiter, reenteredToken, reentryTarget,
						label, waitedMillis, carried)) : null;
		List<?> reply = (nativeReply != null) ? (List<?>) nativeReply
				: this.template.execute(LockScripts.ACQUIRE, List.of(redisKey), (Object[]) NativeScriptArgs.strings(
						owner, ttlMillis, waiter, reenteredToken, reentryTarget, this.publishMode, label, waitedMillis,
						carried));
		return ScriptReplies.acquired(reply);
	}

	/** {@link #acquire(String, String, long, String, long, long, long, String, String)}: not waited, nothing carried. */
	public long[] acquire(String redisKey, String owner, long ttlMillis, String waiter, long reenteredToken,
			long reentryTarget, String label) {
		return acquire(redisKey, owner, ttlMillis, waiter, 0, reenteredToken, reentryTarget, label, "");
	}

	/**
	 * {@return whether an acquisition's reply ({@link #acquire}) says the holder's release will not be announced}
	 * @param reply an acquisition's reply
	 */
	public static boolean unannounced(long[] reply) {
		return reply.length > 2 && reply[2] == 1;
	}

	/**
	 * {@link #acquire} without waiting for Redis, on Lettuce's asynchronous commands: null when that path is not
	 * available (another client, the template path, or connections that do not share one native connection); the
	 * caller then calls {@link #acquire} on a thread of its own. The future completes on Lettuce's threads.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param ttlMillis the lease time in ms
	 * @param waiter the client id noted as waiting when refused, or empty
	 * @param waitedMillis how long the waiter's process has waited, in ms, or 0
	 * @param label the holder's label a new hold is stored with, or empty
	 * @param carried the notes of other processes carried over, or empty
	 * @return the reply to come, or null
	 */
	public @Nullable CompletableFuture<long[]> acquireAsync(String redisKey, String owner, long ttlMillis, String waiter,
			long waitedMillis, String label, String carried) {
		CompletableFuture<Object> reply = runNativeAsync(LockScripts.ACQUIRE, redisKey,
				this.nativeArgs.acquire(owner, ttlMillis, waiter, 0, 0, label, waitedMillis, carried));
		return (reply != null) ? reply.thenApply(value -> ScriptReplies.acquired((List<?>) value)) : null;
	}

	/**
	 * {@link #release} without waiting for Redis, as {@link #acquireAsync}: null when that path is not available.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param token the lease's token
	 * @param channel its release channel
	 * @param clientId this client's id, whose own note of waiting is not counted
	 * @param holdsBefore the holds the owner counts before this release
	 * @param ttlMillis the lease time in ms
	 * @return what the release did, to come, or null
	 */
	public @Nullable CompletableFuture<Released> releaseAsync(String redisKey, String owner, long token, String channel,
			String clientId, long holdsBefore, long ttlMillis) {
		CompletableFuture<Object> reply = runNativeAsync(LockScripts.RELEASE, redisKey,
				this.nativeArgs.release(owner, token, channel, clientId, holdsBefore, receiptMillis(ttlMillis)));
		return (reply != null) ? reply.thenApply(value -> ScriptReplies.released((List<?>) value)) : null;
	}

	/** A lease script on Lettuce's asynchronous commands (see {@link #acquireAsync}); null when not available. */
	@Nullable CompletableFuture<Object> runNativeAsync(RedisScript<?> script, String redisKey, byte[][] argv) {
		return this.nativeScripts.runAsync(script, redisKey, argv);
	}

	/**
	 * A new acquisition as {@link #acquire}, followed, when it acquired, by {@code WAIT replicas timeoutMillis} on the
	 * same connection (see {@link ReplicatedAcquire}).
	 * @param redisKey the lease's key
	 * @param owner the new owner id
	 * @param ttlMillis the lease time in ms
	 * @param waiter the client id noted as waiting when refused, or empty
	 * @param label the holder's label to store, or empty
	 * @param replicas how many replicas must acknowledge the write
	 * @param timeoutMillis how long {@code WAIT} waits for them, in ms
	 * @return {holds, token or holder's ttl, replicas that acknowledged (0 when not acquired), unannounced}
	 */
	public long[] acquireReplicated(String redisKey, String owner, long ttlMillis, String waiter, String label,
			int replicas, long timeoutMillis) {
		return ReplicatedAcquire.acquire(this.template, this.timeoutMillis, this.publishMode, redisKey, owner, ttlMillis,
				waiter, label, replicas, timeoutMillis);
	}

	/**
	 * What the release script did.
	 * @param holdsLeft the owner's holds left, -1 when the lease was not ours
	 * @param othersWaiting whether another process noted that it waits
	 * @param publishRefused Redis's error when it refused to publish (the release stands), else null
	 */
	public record Released(long holdsLeft, boolean othersWaiting, @Nullable String publishRefused) {

		/** The lease was not ours. */
		boolean notOurs() {
			return this.holdsLeft < 0;
		}

	}

	/**
	 * Holds left, or -1 when the lease is not ours; whether another process noted that it waits; and Redis's error
	 * when it refused to publish the release (the lease is released all the same). {@code holdsBefore} is what the
	 * owner counts before this release ({@link StoredLease#holdsBeforeRelease}), {@code ttlMillis} the lease time, which
	 * bounds how long the receipt of a last release lasts (see {@link #receiptMillis}).
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param token the lease's token
	 * @param channel its release channel
	 * @param clientId this client's id, whose own note of waiting is not counted
	 * @param holdsBefore the holds the owner counts before this release
	 * @param ttlMillis the lease time in ms
	 * @return what the release did
	 */
	public Released release(String redisKey, String owner, long token, String channel, String clientId, long holdsBefore,
			long ttlMillis) {
		long receipt = receiptMillis(ttlMillis);
		Object nativeReply = this.nativeScripts.enabled() ? this.nativeScripts.run(LockScripts.RELEASE,
				List.of(redisKey), this.nativeArgs.release(owner, token, channel, clientId, holdsBefore, receipt)) : null;
		List<?> reply = (nativeReply != null) ? (List<?>) nativeReply
				: this.template.execute(LockScripts.RELEASE, List.of(redisKey), owner, Long.toString(token), channel,
						clientId, this.publishMode, Long.toString(holdsBefore), Long.toString(receipt));
		return ScriptReplies.released(reply);
	}

	/** {@return how long the receipt of a last release lasts, see {@link Receipts#millis}} */
	long receiptMillis(long ttlMillis) {
		return Receipts.millis(this.timeoutMillis, ttlMillis);
	}

	/**
	 * The next holder's token; -1 when the lease is not ours, -2 when the owner holds it more than once. The lease
	 * then names the next holder by {@code nextLabel}.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param token the lease's token
	 * @param nextOwner the next holder's owner id
	 * @param nextTtlMillis the next holder's lease time in ms
	 * @param nextLabel the next holder's label, or empty
	 * @return the next holder's token, or -1 or -2
	 */
	public long handOver(String redisKey, String owner, long token, String nextOwner, long nextTtlMillis,
			String nextLabel) {
		Object nativeReply = this.nativeScripts.run(LockScripts.HAND_OVER, redisKey, owner, Long.toString(token),
				nextOwner, Long.toString(nextTtlMillis), nextLabel);
		if (nativeReply != null) {
			return (Long) nativeReply;
		}
		return ScriptReplies.nonNull(this.template.execute(LockScripts.HAND_OVER, List.of(redisKey), owner,
				Long.toString(token), nextOwner, Long.toString(nextTtlMillis), nextLabel));
	}

	/** {@return the kept commands of the shared native connection the next native call would use, or null (tests)} */
	public @Nullable Object keptCommands() {
		return this.nativeScripts.keptCommands();
	}

	/** {@return the connection factory's command timeout in ms where known (Lettuce), else 0} */
	public long commandTimeoutMillis() {
		return this.timeoutMillis;
	}

	/**
	 * The new remaining ttl in ms, or -1 when the lease is not ours. An {@code add} carries a fresh call id, so that it
	 * adds once however often it runs (see {@link LockScripts#EXTEND}).
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param token the lease's token
	 * @param millis the ms to add, or the ttl to set
	 * @param add whether to add rather than set
	 * @return the new remaining ttl in ms, or -1
	 */
	public long extend(String redisKey, String owner, long token, long millis, boolean add) {
		return ScriptReplies.nonNull(this.template.execute(LockScripts.EXTEND, List.of(redisKey), owner, Long.toString(token),
				Long.toString(millis), add ? "add" : "set", add ? Receipts.callId() : ""));
	}

	/**
	 * What the lease at {@code redisKey} holds; null when the key is free.
	 * @param redisKey the lease's key
	 * @return what it holds, or null
	 */
	public @Nullable Held holder(String redisKey) {
		return ScriptReplies.held(this.template.execute(LockScripts.HOLDER, List.of(redisKey)));
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

	/**
	 * The remaining ttl in ms of the lease when it is still {@code owner}'s with {@code token}, else -1.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param token the lease's token
	 * @return the remaining ttl in ms, or -1
	 */
	public long owned(String redisKey, String owner, long token) {
		return ScriptReplies.nonNull(
				this.template.execute(LockScripts.OWNED, List.of(redisKey), owner, Long.toString(token)));
	}

	/**
	 * Delete the lease if {@code owner} holds it (a hold the client does not know); true if there was one.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param channel its release channel
	 * @return whether there was a hold to delete
	 */
	public boolean discard(String redisKey, String owner, String channel) {
		// ReadWriteScripts.DISCARD: the whole lease of an exclusive owner, only this owner's hold on a read-write one
		Object nativeReply = this.nativeScripts.run(ReadWriteScripts.DISCARD, redisKey, owner, channel,
				this.publishMode);
		long deleted = (nativeReply != null) ? (Long) nativeReply
				: ScriptReplies.nonNull(this.template.execute(ReadWriteScripts.DISCARD, List.of(redisKey), owner, channel,
						this.publishMode));
		return deleted == 1;
	}

	/**
	 * The deleted lease's hash as field, value pairs; empty when there was no lease. The call carries a fresh id, and
	 * its second run answers from the first one's receipt (see {@link LockScripts#FORCE_RELEASE}).
	 * @param redisKey the lease's key
	 * @param channel its release channel
	 * @return the deleted hash as field, value pairs, or empty
	 */
	public List<?> forceRelease(String redisKey, String channel) {
		List<?> reply = this.template.execute(LockScripts.FORCE_RELEASE, List.of(redisKey), channel, this.publishMode,
				Receipts.callId(), Long.toString(receiptMillis(Long.MAX_VALUE)));
		return (reply != null) ? reply : List.of();
	}

}
