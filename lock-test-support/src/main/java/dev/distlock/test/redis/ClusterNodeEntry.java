package dev.distlock.test.redis;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** One line of {@code CLUSTER NODES}. */
record ClusterNodeEntry(String id, Set<String> flags, @Nullable String masterId, boolean connected, BitSet slots) {

	boolean isMaster() {
		return flags.contains("master");
	}

	boolean isReplica() {
		return flags.contains("slave");
	}

	boolean isFailing() {
		return flags.contains("fail") || flags.contains("fail?") || flags.contains("handshake") || flags.contains("noaddr");
	}

	/** Parses {@code <id> <address> <flags> <master> <ping> <pong> <epoch> <link> <slot>...} lines. */
	static List<ClusterNodeEntry> parseAll(String text) {
		List<ClusterNodeEntry> entries = new ArrayList<>();
		for (String line : text.split("\r?\n")) {
			if (line.isBlank()) {
				continue;
			}
			String[] fields = line.trim().split(" ");
			BitSet slots = new BitSet(RedisCluster.SLOTS);
			for (int i = 8; i < fields.length; i++) {
				String slot = fields[i];
				if (slot.startsWith("[")) {
					continue; // a slot being imported or migrated
				}
				int dash = slot.indexOf('-');
				if (dash < 0) {
					slots.set(Integer.parseInt(slot));
				} else {
					slots.set(Integer.parseInt(slot.substring(0, dash)), Integer.parseInt(slot.substring(dash + 1)) + 1);
				}
			}
			boolean myself = fields[2].contains("myself");
			entries.add(new ClusterNodeEntry(fields[0], Set.of(fields[2].split(",")), "-".equals(fields[3]) ? null : fields[3],
					myself || "connected".equals(fields[7]), slots));
		}
		return entries;
	}
}
