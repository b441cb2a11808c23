package dev.distlock.test.redis;

import dev.distlock.test.redis.Await.Probe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link RedisCluster} is formed ({@code CLUSTER MEET}, {@code ADDSLOTS}, {@code REPLICATE})
 * and what its nodes say about it: the health and promotion probes its waits poll, and the
 * {@code CLUSTER NODES} view every topology question is answered from. Nothing is cached but the
 * node ids (fixed at start, kept in nodes.conf) and the slots each master served when last seen.
 */
final class ClusterTopology {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
	private static final int SLOTS = RedisCluster.SLOTS;

	/** The cluster, named in errors. */
	private final Object owner;
	private final List<RedisServer> nodes;
	private final int masterCount;
	/** Filled once by {@link #form(Duration)}, before the cluster is handed out; read-only after. */
	final Map<String, RedisServer> byId = new HashMap<>();
	private final Map<RedisServer, String> ids = new HashMap<>();
	/** Slots per master id as last seen in an agreed view: what a killed master served. */
	final Map<String, BitSet> lastKnownSlots = new ConcurrentHashMap<>();

	ClusterTopology(Object owner, List<RedisServer> nodes, int masterCount) {
		this.owner = owner;
		this.nodes = List.copyOf(nodes);
		this.masterCount = masterCount;
	}

	void form(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (RedisServer node : nodes) {
			String id = (String) Objects.requireNonNull(node.execute("CLUSTER", "MYID"));
			byId.put(id, node);
			ids.put(node, id);
		}
		for (int i = 0; i < masterCount; i++) {
			RedisServer master = nodes.get(i);
			master.execute("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1)); // distinct epochs: no collisions to resolve
			addSlots(master, i * SLOTS / masterCount, (i + 1) * SLOTS / masterCount - 1);
		}
		RedisServer first = nodes.get(0);
		for (RedisServer node : nodes.subList(1, nodes.size())) {
			node.execute("CLUSTER", "MEET", RedisServer.HOST, Integer.toString(first.port()));
		}
		Await.until(remaining(deadline), "met and serving all slots", this::healthProbe);
		for (int i = 0; i < masterCount; i++) {
			nodes.get(masterCount + i).execute("CLUSTER", "REPLICATE", id(nodes.get(i)));
		}
		Await.until(remaining(deadline), "healthy with all replicas in sync", this::healthProbe);
	}

	private static void addSlots(RedisServer master, int from, int to) {
		if (master.binary().majorVersion() >= 7) {
			master.execute("CLUSTER", "ADDSLOTSRANGE", Integer.toString(from), Integer.toString(to));
			return;
		}
		List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS")); // 6.2 has no ADDSLOTSRANGE
		for (int slot = from; slot <= to; slot++) {
			command.add(Integer.toString(slot));
		}
		master.execute(command.toArray(String[]::new));
	}

	Probe<Boolean> healthProbe() {
		List<RedisServer> live = live();
		if (live.isEmpty()) {
			return Probe.notYet("no node is live");
		}
		Map<String, String> agreed = null;
		RedisServer agreedBy = null;
		List<ClusterNodeEntry> lastView = List.of();
		for (RedisServer asked : live) {
			String state = clusterState(asked);
			if (!"ok".equals(state)) {
				return Probe.notYet(address(asked) + " reports cluster_state:" + state);
			}
			List<ClusterNodeEntry> view = view(asked);
			Map<String, String> roles = new LinkedHashMap<>();
			BitSet served = new BitSet(SLOTS);
			for (RedisServer node : live) {
				ClusterNodeEntry entry = find(view, id(node));
				if (entry == null) {
					return Probe.notYet(address(asked) + " does not know " + address(node));
				}
				if (entry.isFailing() || !entry.connected()) {
					return Probe.notYet(address(asked) + " sees " + address(node) + " as " + entry.flags() + (entry.connected() ? "" : ", disconnected"));
				}
				String masterId = entry.masterId();
				roles.put(address(node), entry.isReplica() && masterId != null
						? "replica of " + (byId.containsKey(masterId) ? address(node(masterId)) : masterId)
						: "master of " + ClusterSlots.ranges(entry.slots()));
				if (entry.isMaster()) {
					served.or(entry.slots());
				}
			}
			if (served.cardinality() != SLOTS) {
				return Probe.notYet(address(asked) + " sees live masters serving " + served.cardinality() + " of " + SLOTS + " slots: " + roles);
			}
			if (agreed == null) {
				agreed = roles;
				agreedBy = asked;
			} else if (!agreed.equals(roles)) {
				return Probe.notYet(address(asked) + " sees " + roles + " but " + address(Objects.requireNonNull(agreedBy)) + " sees " + agreed);
			}
			lastView = view;
		}
		for (RedisServer node : live) {
			ClusterNodeEntry entry = Objects.requireNonNull(find(lastView, id(node)));
			String masterId = entry.masterId();
			if (entry.isReplica() && masterId != null) {
				String replication = (String) Objects.requireNonNull(node.execute(PROBE_TIMEOUT, "INFO", "replication"));
				String masterPort = Integer.toString(node(masterId).port());
				if (!masterPort.equals(field(replication, "master_port")) || !"up".equals(field(replication, "master_link_status"))) {
					return Probe.notYet(address(node) + " replicates " + field(replication, "master_port") + " (want " + masterPort
							+ "), link " + field(replication, "master_link_status"));
				}
				RedisServer master = node(masterId);
				if (!listsOnlineReplica((String) Objects.requireNonNull(master.execute(PROBE_TIMEOUT, "INFO", "replication")), node.port())) {
					return Probe.notYet(address(master) + " does not list its replica " + address(node) + " as online yet");
				}
			}
		}
		remember(lastView);
		return Probe.done(Boolean.TRUE);
	}

	Probe<RedisServer> promotionProbe(String killedId, BitSet slots) {
		List<RedisServer> live = live();
		RedisServer successor = null;
		List<ClusterNodeEntry> lastView = List.of();
		for (RedisServer asked : live) {
			String state = clusterState(asked);
			if (!"ok".equals(state)) {
				return Probe.notYet(address(asked) + " reports cluster_state:" + state);
			}
			List<ClusterNodeEntry> view = view(asked);
			ClusterNodeEntry owner = null;
			for (ClusterNodeEntry entry : view) {
				if (entry.isMaster() && entry.slots().intersects(slots)) {
					BitSet missing = (BitSet) slots.clone();
					missing.andNot(entry.slots());
					if (owner != null || !missing.isEmpty()) {
						return Probe.notYet(address(asked) + " sees the slots " + ClusterSlots.ranges(slots) + " split");
					}
					owner = entry;
				}
			}
			if (owner == null || owner.id().equals(killedId)) {
				return Probe.notYet(address(asked) + " sees " + ClusterSlots.ranges(slots) + " served by "
						+ (owner == null ? "nobody" : "the old master"));
			}
			RedisServer candidate = node(owner.id());
			if (!isLive(candidate)) {
				return Probe.notYet(address(asked) + " sees " + ClusterSlots.ranges(slots) + " served by " + address(candidate) + ", which is down");
			}
			if (successor == null) {
				successor = candidate;
			} else if (successor != candidate) {
				return Probe.notYet("nodes disagree on who serves " + ClusterSlots.ranges(slots) + ": " + address(successor) + " or " + address(candidate));
			}
			lastView = view;
		}
		if (successor == null) {
			return Probe.notYet("no node is live");
		}
		String role = field((String) Objects.requireNonNull(successor.execute(PROBE_TIMEOUT, "INFO", "replication")), "role");
		if (!"master".equals(role)) {
			return Probe.notYet(address(successor) + " reports role:" + role);
		}
		remember(lastView);
		return Probe.done(successor);
	}

	void remember(List<ClusterNodeEntry> view) {
		for (ClusterNodeEntry entry : view) {
			if (entry.isMaster()) {
				lastKnownSlots.put(entry.id(), (BitSet) entry.slots().clone());
			}
		}
	}

	private static @Nullable String clusterState(RedisServer node) {
		return field((String) Objects.requireNonNull(node.execute(PROBE_TIMEOUT, "CLUSTER", "INFO")), "cluster_state");
	}

	static List<ClusterNodeEntry> view(RedisServer node) {
		return ClusterNodeEntry.parseAll((String) Objects.requireNonNull(node.execute(PROBE_TIMEOUT, "CLUSTER", "NODES")));
	}

	static @Nullable ClusterNodeEntry find(List<ClusterNodeEntry> view, String id) {
		for (ClusterNodeEntry entry : view) {
			if (entry.id().equals(id)) {
				return entry;
			}
		}
		return null;
	}

	List<RedisServer> live() {
		return nodes.stream().filter(ClusterTopology::isLive).toList();
	}

	RedisServer anyLive() {
		List<RedisServer> live = live();
		if (live.isEmpty()) {
			throw new IllegalStateException("No live node in " + owner);
		}
		return live.get(0);
	}

	static boolean isLive(RedisServer node) {
		return node.isRunning() && !node.isPaused();
	}

	String id(RedisServer node) {
		String id = ids.get(node);
		if (id == null) {
			throw new IllegalArgumentException(node + " is not a node of " + owner);
		}
		return id;
	}

	RedisServer node(String id) {
		RedisServer node = byId.get(id);
		if (node == null) {
			throw new IllegalStateException("Unknown node id " + id + " in " + owner);
		}
		return node;
	}

	void requireMember(RedisServer node) {
		id(node);
	}

	static String address(RedisServer node) {
		return RedisServer.HOST + ":" + node.port();
	}

	/** A field of an INFO-style reply ({@code name:value} lines). */
	static @Nullable String field(String info, String name) {
		for (String line : info.split("\r?\n")) {
			if (line.startsWith(name + ":")) {
				return line.substring(name.length() + 1).trim();
			}
		}
		return null;
	}

	/**
	 * Whether a master's {@code INFO replication} lists the replica on {@code port} as online. A
	 * replica reports its link up as soon as it has loaded the snapshot; the master streams writes
	 * to it only once it has acknowledged that, and a write made in between reaches the replica a
	 * little later.
	 */
	static boolean listsOnlineReplica(String masterReplication, int port) {
		for (String line : masterReplication.split("\r?\n")) {
			if (line.startsWith("slave") && line.contains(",port=" + port + ",") && line.contains(",state=online")) {
				return true;
			}
		}
		return false;
	}

	static Duration remaining(long deadline) {
		return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
	}
}
