package dev.distlock.redis.internal.store;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.LockScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The door to Redis for the fair-lock scripts ({@link FairScripts}): one script call per operation on four keys of one
 * hash slot, acquire and release on the lease store's path (the Lettuce-native shortcut where it applies, else the
 * template), the leave by {@code EVAL} through the template. Blocking: asynchronous callers run these on the engine's
 * call pool.
 */
public final class FairStore {

	private final LeaseStore store;

	private final StringRedisTemplate template;

	/** {@link LockScripts#SHARDED} or empty, as the lease store's. */
	private final String publishMode;

	FairStore(LeaseStore store, StringRedisTemplate template, String publishMode) {
		this.store = store;
		this.template = template;
		this.publishMode = publishMode;
	}

	/**
	 * {1, token} when acquired; {0, holder's pttl (-2 when free with others queued ahead), position in the queue (0
	 * when not queued)} otherwise. {@code queue}: whether to queue (or keep queued) the caller; {@code label}: the
	 * holder's label, stored with the hold or the queue entry.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param ttlMillis the lease time in ms
	 * @param entryTtlMillis how long a queue entry lasts unrefreshed, in ms
	 * @param queue whether to queue the caller
	 * @param label the holder's label, or empty
	 * @return {1, token} or {0, pttl, position}
	 */
	public long[] acquire(String redisKey, String owner, long ttlMillis, long entryTtlMillis, boolean queue,
			String label) {
		List<?> reply = (List<?>) this.store.run(FairScripts.FAIR_ACQUIRE, FairScripts.keys(redisKey), owner,
				Long.toString(ttlMillis), Long.toString(entryTtlMillis), queue ? "1" : "", label);
		if (reply == null || reply.size() < 2) {
			throw new IllegalStateException("Unexpected reply from the fair acquire script: " + reply);
		}
		return new long[] { number(reply.get(0)), number(reply.get(1)), (reply.size() > 2) ? number(reply.get(2)) : 0 };
	}

	/**
	 * What the fair release did: holds left (-1 not ours), and the owner and token it handed the lease to, if any.
	 * @param holdsLeft the owner's holds left, -1 when not ours
	 * @param nextOwner the owner id the lease was handed to, or null
	 * @param nextToken its token, 0 when none
	 * @param publishRefused Redis's error when it refused to publish, else null
	 */
	public record FairReleased(long holdsLeft, @Nullable String nextOwner, long nextToken,
			@Nullable String publishRefused) {
	}

	/**
	 * The release of one hold; {@code holdsBefore} and {@code ttlMillis} as for {@link LeaseStore#release}, so that the
	 * release answers the same when it runs twice.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param token the lease's token
	 * @param channel its release channel
	 * @param holdsBefore the holds the owner counts before this release
	 * @param ttlMillis the lease time in ms
	 * @return what the release did
	 */
	public FairReleased release(String redisKey, String owner, long token, String channel, long holdsBefore,
			long ttlMillis) {
		List<?> reply = (List<?>) this.store.run(FairScripts.FAIR_RELEASE, FairScripts.keys(redisKey), owner,
				Long.toString(token), channel, this.publishMode, Long.toString(holdsBefore),
				Long.toString(this.store.receiptMillis(ttlMillis)));
		if (reply == null || reply.isEmpty()) {
			throw new IllegalStateException("Unexpected reply from the fair release script: " + reply);
		}
		long left = number(reply.get(0));
		if (left != 0 || reply.size() < 3) {
			return new FairReleased(left, null, 0, null);
		}
		String next = ScriptReplies.text(reply.get(2));
		return new FairReleased(0, next.isEmpty() ? null : next, number(reply.get(1)),
				(reply.size() > 3) ? ScriptReplies.text(reply.get(3)) : null);
	}

	/**
	 * Remove the owner's queue entry, passing on a lease it was handed; true when it passed one on. Always sent with
	 * {@code EVAL}, not {@code EVALSHA}: a leave is rare and is the clean-up after failures, so it must run even on a
	 * server that does not have the script cached (after a restart or failover) when its reply is lost, where an
	 * {@code EVALSHA} would only have earned a {@code NOSCRIPT} nobody hears.
	 * @param redisKey the lease's key
	 * @param owner the owner id
	 * @param channel its release channel
	 * @return whether it passed a lease on
	 */
	public boolean leave(String redisKey, String owner, String channel) {
		List<String> keys = FairScripts.keys(redisKey);
		byte[][] keysAndArgs = { bytes(keys.get(0)), bytes(keys.get(1)), bytes(keys.get(2)), bytes(keys.get(3)),
				bytes(owner), bytes(channel), bytes(this.publishMode) };
		Long reply = this.template.execute((RedisCallback<Long>) connection -> connection.scriptingCommands()
			.eval(bytes(FairScripts.FAIR_LEAVE.getScriptAsString()), ReturnType.INTEGER, 4, keysAndArgs));
		if (reply == null) {
			throw new IllegalStateException("No reply from the fair leave script");
		}
		return reply == 1;
	}

	/**
	 * The number of waiters queued for the lock (live or not yet pruned).
	 * @param redisKey the lease's key
	 * @return the queue's length
	 */
	public long queueLength(String redisKey) {
		Long size = this.template.opsForZSet().zCard(FairScripts.queueKey(redisKey));
		return (size != null) ? size : 0;
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	private static long number(Object value) {
		return (value instanceof Number number) ? number.longValue() : Long.parseLong(ScriptReplies.text(value));
	}

}
