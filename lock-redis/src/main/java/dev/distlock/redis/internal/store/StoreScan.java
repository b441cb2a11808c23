package dev.distlock.redis.internal.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.StreamSupport;

import dev.distlock.core.LockMode;
import dev.distlock.core.StoredLock;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.ListingScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The lease keys of one store, read with {@code SCAN} a step at a time: one Redis (or a Sentinel's master), or every
 * master of a Cluster in turn. Each step runs as a script whose only key routes it: on a Cluster, a key in the first
 * hash slot of the master to scan, so that Spring Data sends it there with any client, and the step scans that master
 * (a script's {@code SCAN} sees the keys of the node it runs on). A master is named by its first slot rather than its
 * id, so that a scan goes on at the replica promoted in its place.
 * <p>
 * Needs {@code +scan} in an ACL; the scan only lists keys, and every lease found is then read with {@link #describe}
 * on its own key.
 */
public final class StoreScan implements ListingSource {

	/** Per hash slot, a hash tag whose slot it is: found once, by trying short tags in turn. */
	private static final Map<Integer, String> SLOT_TAGS = new ConcurrentHashMap<>();

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate template;

	private final String keyPrefix;

	/** {@code <prefix>:{*}}, the prefix's glob characters escaped: every lease key and nothing of a fair lock's others. */
	private final String pattern;

	private final boolean cluster;

	StoreScan(RedisConnectionFactory connectionFactory, StringRedisTemplate template, String keyPrefix,
			boolean cluster) {
		this.connectionFactory = connectionFactory;
		this.template = template;
		this.keyPrefix = keyPrefix;
		this.pattern = escapeGlob(keyPrefix) + ":{*}";
		this.cluster = cluster;
	}

	/**
	 * {@return the parts to scan, in order: {@code [0]} on one Redis; on a Cluster the first slot of each master,
	 * lowest first}
	 */
	@Override
	public int[] parts() {
		if (!this.cluster) {
			return new int[] { 0 };
		}
		try (RedisClusterConnection connection = this.connectionFactory.getClusterConnection()) {
			return StreamSupport.stream(connection.clusterGetNodes().spliterator(), false)
				.filter(RedisClusterNode::isMaster)
				.filter((node) -> !node.getSlotRange().getSlots().isEmpty())
				.mapToInt((node) -> node.getSlotRange().getSlots().stream().mapToInt(Integer::intValue).min().orElse(0))
				.sorted()
				.distinct()
				.toArray();
		}
	}

	/**
	 * One {@code SCAN} step on a part.
	 * @param part a value of {@link #parts()}
	 * @param cursor the scan cursor, "0" to start
	 * @param count the step's {@code COUNT}
	 * @return the next cursor ("0" once the part is done) and the lease keys found
	 */
	@Override
	public Step scan(int part, String cursor, int count) {
		List<?> reply = this.template.execute(ListingScripts.SCAN, List.of(routingKey(part)), cursor, this.pattern,
				Integer.toString(count));
		if (reply == null || reply.size() != 2 || !(reply.get(1) instanceof List<?> keys)) {
			throw new IllegalStateException("Unexpected reply from SCAN: " + reply);
		}
		List<String> leaseKeys = new ArrayList<>(keys.size());
		for (Object key : keys) {
			String redisKey = String.valueOf(key);
			if (redisKey.endsWith("}")) {
				leaseKeys.add(redisKey);
			}
		}
		return new Step(String.valueOf(reply.get(0)), leaseKeys);
	}

	/**
	 * The lock key of a lease key, or null when {@code redisKey} is not one of this prefix's.
	 * @param redisKey {@code <prefix>:{<key>}}
	 * @return its lock's key, or null
	 */
	public @Nullable String lockKey(String redisKey) {
		String start = this.keyPrefix + ":{";
		if (!redisKey.startsWith(start) || !redisKey.endsWith("}") || redisKey.length() <= start.length() + 1) {
			return null;
		}
		return redisKey.substring(start.length(), redisKey.length() - 1);
	}

	/** The lock at a lease key this store's scan found: its own key, its lease as {@link #describe(String, String)}. */
	@Override
	public Optional<StoredLock> describe(int part, String redisKey) {
		String key = lockKey(redisKey);
		return (key != null) ? describe(key, redisKey) : Optional.empty();
	}

	/**
	 * What the lease at {@code redisKey} is now; empty when it is no lease (gone, or only waiters' notes).
	 * @param key the lock key
	 * @param redisKey its lease key
	 * @return the lock, or empty
	 */
	public Optional<StoredLock> describe(String key, String redisKey) {
		List<?> reply = this.template.execute(ListingScripts.DESCRIBE,
				List.of(redisKey, FairScripts.queueKey(redisKey)));
		if (reply == null || reply.isEmpty()) {
			return Optional.empty();
		}
		if (reply.size() != 7) {
			throw new IllegalStateException("Unexpected reply from the describe script: " + reply);
		}
		long holds = number(reply.get(0));
		long queue = number(reply.get(4));
		String mode = String.valueOf(reply.get(3));
		LockMode lockMode = switch (mode) {
			case "w" -> LockMode.WRITE;
			case "r" -> LockMode.READ;
			case "p" -> LockMode.PERMITS;
			default -> (queue > 0) ? LockMode.FAIR : LockMode.EXCLUSIVE;
		};
		String labels = ScriptReplies.text(reply.get(6));
		return Optional.of(new StoredLock(key, lockMode, (int) Math.min(Integer.MAX_VALUE, holds),
				Duration.ofMillis(Math.max(0, number(reply.get(2)))), number(reply.get(1)),
				labels.isEmpty() ? null : labels,
				(lockMode == LockMode.FAIR) ? queue : -1,
				(lockMode == LockMode.FAIR) ? -1 : (int) number(reply.get(5)), 1));
	}

	/** A key that routes a step to the part's master: in its first slot on a Cluster; any of the prefix's elsewhere. */
	private String routingKey(int part) {
		if (!this.cluster) {
			return this.keyPrefix + ":__scan__";
		}
		return this.keyPrefix + ":{" + SLOT_TAGS.computeIfAbsent(part, StoreScan::tagFor) + "}";
	}

	/** A hash tag in {@code slot}: "s" and a number, the first that hashes there (about 16,000 tries at most). */
	private static String tagFor(int slot) {
		for (int i = 0; i < 100_000_000; i++) {
			String tag = "s" + i;
			if (ClusterSlotHashUtil.calculateSlot(tag) == slot) {
				return tag;
			}
		}
		throw new IllegalArgumentException("No hash tag found for slot " + slot);
	}

	private static String escapeGlob(String text) {
		StringBuilder escaped = new StringBuilder(text.length() + 4);
		for (char c : text.toCharArray()) {
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				escaped.append('\\');
			}
			escaped.append(c);
		}
		return escaped.toString();
	}

	private static long number(Object value) {
		if (value instanceof Number number) {
			return number.longValue();
		}
		try {
			return Long.parseLong(String.valueOf(value));
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

	/**
	 * One scan step's outcome.
	 * @param cursor the next scan cursor, "0" once the part is done
	 * @param redisKeys the lease keys the step found
	 */
	public record Step(String cursor, List<String> redisKeys) {
	}

}
