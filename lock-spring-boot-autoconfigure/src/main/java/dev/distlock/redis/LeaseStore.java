package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.ClassUtils;

/**
 * The engine's only door to Redis: one script call per lease operation, and batched renewals.
 * <p>
 * Renewals are batched twice: one {@link LockScripts#RENEW_ALL} call renews up to {@value #BATCH_SIZE} leases, and the
 * calls of one watchdog tick are pipelined on Lettuce's shared connection (one call per hash slot in a cluster, as a
 * script may only touch keys of one slot there). Without Lettuce they run one after the other.
 */
final class LeaseStore {

	static final int BATCH_SIZE = 500;

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisFuture",
			LeaseStore.class.getClassLoader());

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate template;

	private final boolean cluster;

	private final long timeoutMillis;

	/** False once a connection turned out not to be Lettuce's: from then on, scripts go through the template. */
	private volatile boolean lettuceNative = LETTUCE_PRESENT;

	LeaseStore(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
		this.template = new StringRedisTemplate(connectionFactory);
		this.template.afterPropertiesSet();
		this.cluster = isCluster(connectionFactory);
		this.timeoutMillis = LETTUCE_PRESENT ? LettuceScripts.timeoutMillis(connectionFactory) : 0;
	}

	private static boolean isCluster(RedisConnectionFactory connectionFactory) {
		try {
			return connectionFactory.getClass().getMethod("isClusterAware").invoke(connectionFactory) instanceof Boolean b && b;
		}
		catch (ReflectiveOperationException ex) {
			return false;
		}
	}

	/**
	 * {hold count, token} when acquired; {0, holder's remaining ttl in ms} when not, and then, if {@code waiter} is
	 * a client id, the lease notes that this client waits.
	 */
	long[] acquire(String redisKey, String owner, long ttlMillis, String waiter) {
		Object nativeReply = runNative(LockScripts.ACQUIRE, redisKey, owner, Long.toString(ttlMillis), waiter);
		List<?> reply = (nativeReply != null) ? (List<?>) nativeReply
				: this.template.execute(LockScripts.ACQUIRE, List.of(redisKey), owner, Long.toString(ttlMillis), waiter);
		if (reply == null || reply.size() != 2) {
			throw new IllegalStateException("Unexpected reply from the acquire script: " + reply);
		}
		return new long[] { ((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue() };
	}

	/** {holds left, or -1 when the lease is not ours; 1 when another process noted that it waits, else 0}. */
	long[] release(String redisKey, String owner, long token, String channel, String clientId) {
		Object nativeReply = runNative(LockScripts.RELEASE, redisKey, owner, Long.toString(token), channel, clientId);
		List<?> reply = (nativeReply != null) ? (List<?>) nativeReply
				: this.template.execute(LockScripts.RELEASE, List.of(redisKey), owner, Long.toString(token), channel,
						clientId);
		if (reply == null || reply.size() != 2) {
			throw new IllegalStateException("Unexpected reply from the release script: " + reply);
		}
		return new long[] { ((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue() };
	}

	/** The next holder's token; -1 when the lease is not ours, -2 when the owner holds it more than once. */
	long handOver(String redisKey, String owner, long token, String nextOwner, long nextTtlMillis) {
		Object nativeReply = runNative(LockScripts.HAND_OVER, redisKey, owner, Long.toString(token), nextOwner,
				Long.toString(nextTtlMillis));
		if (nativeReply != null) {
			return (Long) nativeReply;
		}
		return nonNull(this.template.execute(LockScripts.HAND_OVER, List.of(redisKey), owner, Long.toString(token),
				nextOwner, Long.toString(nextTtlMillis)));
	}

	/**
	 * Run a lease script on Lettuce's own commands (one key, string arguments); null when the connection is not
	 * Lettuce's, and the caller uses the template. Failures propagate as Lettuce's runtime exceptions.
	 */
	private @Nullable Object runNative(RedisScript<?> script, String redisKey, String... args) {
		if (!this.lettuceNative) {
			return null;
		}
		byte[][] keys = { bytes(redisKey) };
		byte[][] argv = new byte[args.length][];
		for (int i = 0; i < args.length; i++) {
			argv[i] = bytes(args[i]);
		}
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Object reply = LettuceScripts.run(connection.getNativeConnection(), script, keys, argv, this.timeoutMillis);
			if (reply == null) {
				this.lettuceNative = false;
			}
			return reply;
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/** The new remaining ttl in ms, or -1 when the lease is not ours. */
	long extend(String redisKey, String owner, long token, long millis, boolean add) {
		return nonNull(this.template.execute(LockScripts.EXTEND, List.of(redisKey), owner, Long.toString(token),
				Long.toString(millis), add ? "add" : "set"));
	}

	/** The deleted lease's hash as field, value pairs; empty when there was no lease. */
	List<?> forceRelease(String redisKey, String channel) {
		List<?> reply = this.template.execute(LockScripts.FORCE_RELEASE, List.of(redisKey), channel);
		return (reply != null) ? reply : List.of();
	}

	private static long nonNull(Long value) {
		if (value == null) {
			throw new IllegalStateException("No reply from a lease script");
		}
		return value;
	}

	/**
	 * Renew the given leases, raising each one's expiry to at least its ttl. Returns, per lease in order, whether it is
	 * still ours. Throws when Redis could not be asked, or did not answer within {@code timeoutNanos}.
	 */
	boolean[] renewAll(List<LeaseEntry> entries, long[] ttlMillis, long timeoutNanos) throws Exception {
		boolean[] result = new boolean[entries.size()];
		List<int[]> batches = batches(entries);
		if (LETTUCE_PRESENT) {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				if (LettuceRenewals.renew(connection.getNativeConnection(), entries, ttlMillis, batches, result,
						timeoutNanos)) {
					return result;
				}
			}
		}
		for (int[] batch : batches) {
			List<String> keys = new ArrayList<>(batch.length);
			Object[] args = new Object[batch.length * 3];
			for (int i = 0; i < batch.length; i++) {
				LeaseEntry entry = entries.get(batch[i]);
				keys.add(entry.redisKey);
				args[3 * i] = entry.owner;
				args[3 * i + 1] = Long.toString(entry.token);
				args[3 * i + 2] = Long.toString(ttlMillis[batch[i]]);
			}
			List<?> reply = this.template.execute(LockScripts.RENEW_ALL, keys, args);
			apply(reply, batch, result);
		}
		return result;
	}

	static void apply(List<?> reply, int[] batch, boolean[] result) {
		if (reply == null || reply.size() != batch.length) {
			throw new IllegalStateException("Unexpected reply from the renewal script: " + reply);
		}
		for (int i = 0; i < batch.length; i++) {
			result[batch[i]] = ((Number) reply.get(i)).longValue() == 1;
		}
	}

	/** Indexes into {@code entries}, at most {@link #BATCH_SIZE} a batch, and one slot a batch in a cluster. */
	private List<int[]> batches(List<LeaseEntry> entries) {
		Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
		for (int i = 0; i < entries.size(); i++) {
			int group = this.cluster ? ClusterSlotHashUtil.calculateSlot(entries.get(i).redisKey) : 0;
			groups.computeIfAbsent(group, g -> new ArrayList<>()).add(i);
		}
		List<int[]> batches = new ArrayList<>();
		for (List<Integer> group : groups.values()) {
			for (int from = 0; from < group.size(); from += BATCH_SIZE) {
				batches.add(group.subList(from, Math.min(group.size(), from + BATCH_SIZE)).stream()
						.mapToInt(Integer::intValue).toArray());
			}
		}
		return batches;
	}


}
