package dev.distlock.redis.internal.store;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * How a renewal round is cut into batches ({@link RenewalBatches}): by renewal script, by hash slot on a cluster
 * connection, and at most {@link RenewalBatches#BATCH_SIZE} leases a batch. Apart from the sending, which is the same
 * for every batch.
 */
final class RenewalGroups {

	private RenewalGroups() {
	}

	/** {@return the indexes {@code 0 .. size - 1}: every lease of a round} */
	static int[] allOf(int size) {
		int[] all = new int[size];
		for (int i = 0; i < size; i++) {
			all[i] = i;
		}
		return all;
	}

	/**
	 * The renewal script of a batch, its kind's ({@link StoredLease#renewAllScript}): {@link LockScripts#RENEW_ALL}, or
	 * {@link ReadWriteScripts#RENEW_ALL} for the holds of read-write locks (each holder's own deadline), which are
	 * batched apart.
	 */
	@SuppressWarnings("rawtypes")
	static RedisScript<List> script(List<? extends StoredLease> entries, int[] batch) {
		return entries.get(batch[0]).renewAllScript();
	}

	/**
	 * Indexes into {@code entries}, at most {@link RenewalBatches#BATCH_SIZE} a batch, and one slot a batch when
	 * {@code bySlot}; the holds of each renewal script (read-write holds, say) in batches of their own.
	 */
	static List<int[]> batches(List<? extends StoredLease> entries, boolean bySlot) {
		Map<BatchGroup, List<Integer>> groups = new LinkedHashMap<>();
		for (int i = 0; i < entries.size(); i++) {
			int slot = bySlot ? ClusterSlotHashUtil.calculateSlot(entries.get(i).redisKey()) : 0;
			BatchGroup group = new BatchGroup(entries.get(i).renewAllScript(), slot);
			groups.computeIfAbsent(group, g -> new ArrayList<>()).add(i);
		}
		List<int[]> batches = new ArrayList<>();
		for (List<Integer> group : groups.values()) {
			for (int from = 0; from < group.size(); from += RenewalBatches.BATCH_SIZE) {
				batches.add(group.subList(from, Math.min(group.size(), from + RenewalBatches.BATCH_SIZE)).stream()
						.mapToInt(Integer::intValue).toArray());
			}
		}
		return batches;
	}

	/** The holds one batch may take: of one renewal script, on one slot. */
	private record BatchGroup(RedisScript<?> script, int slot) {
	}

}
