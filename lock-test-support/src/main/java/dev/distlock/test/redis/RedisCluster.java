package dev.distlock.test.redis;

import dev.distlock.test.redis.Await.Probe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A Redis Cluster of real {@code redis-server} processes on free loopback ports: N masters with one
 * replica each (default 3 + 3), formed with {@code CLUSTER MEET}, {@code ADDSLOTS} and
 * {@code REPLICATE}, so no {@code redis-cli} is needed.
 *
 * <p>Cluster-aware code must be proven against slot routing, a master that dies and a node that
 * comes back, on the same binary as the standalone tests ({@link RedisBinary#detect()}, or the
 * embedded 6.2 one). Questions about the topology ({@link #masterFor(String)}, {@link #masters()},
 * {@link #replicaOf(RedisServer)}) are answered by a live node's {@code CLUSTER NODES}, never by a
 * map cached at start, so they stay right after a failover. Every wait has a deadline; the nodes
 * are {@link RedisServer}s, so the JVM shutdown hook kills whatever {@link #close()} did not.
 *
 * <p>A node is <em>live</em> when its process runs and is not paused. Failover needs at least 3
 * masters (a majority of masters elects the replica).
 */
public final class RedisCluster implements AutoCloseable {

	/** The number of hash slots. */
	public static final int SLOTS = 16384;

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
	private static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(2000);
	private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(60);
	private static final Duration DEFAULT_HEALTH_TIMEOUT = Duration.ofSeconds(30);

	private final List<RedisServer> nodes;
	private final int masterCount;
	private final Map<String, RedisServer> byId = new HashMap<>();
	private final Map<RedisServer, String> ids = new HashMap<>();
	private final Duration nodeTimeout;
	/** Slots per master id as last seen in an agreed view: what a killed master served. */
	private final Map<String, BitSet> lastKnownSlots = new ConcurrentHashMap<>();
	private volatile boolean closed;

	private RedisCluster(List<RedisServer> nodes, int masterCount, Duration nodeTimeout) {
		this.nodes = List.copyOf(nodes);
		this.masterCount = masterCount;
		this.nodeTimeout = nodeTimeout;
	}

	/** Starts 3 masters and 3 replicas with {@link RedisBinary#detect()}. */
	public static RedisCluster start() {
		return builder().start();
	}

	public static Builder builder() {
		return new Builder();
	}

	/**
	 * The hash slot of a key: CRC16 (XMODEM) of the key, or of its hash tag (the part between the
	 * first <code>{</code> and the next <code>}</code>, if not empty), modulo 16384.
	 */
	public static int slotOf(String key) {
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		int from = 0;
		int to = bytes.length;
		int open = indexOf(bytes, (byte) '{', 0);
		if (open >= 0) {
			int close = indexOf(bytes, (byte) '}', open + 1);
			if (close > open + 1) {
				from = open + 1;
				to = close;
			}
		}
		return crc16(bytes, from, to) & (SLOTS - 1);
	}

	/** All nodes, in start order: the first masters, then their replicas (roles change on failover). */
	public List<RedisServer> nodes() {
		return nodes;
	}

	/** The nodes serving slots, ordered by their first slot, as a live node sees them now. */
	public List<RedisServer> masters() {
		List<NodeEntry> view = view(anyLive());
		return view.stream()
				.filter(e -> e.isMaster() && !e.slots().isEmpty() && byId.containsKey(e.id()))
				.sorted(Comparator.comparingInt(e -> e.slots().nextSetBit(0)))
				.map(e -> node(e.id()))
				.toList();
	}

	/** The nodes flagged as replicas, in start order, as a live node sees them now. */
	public List<RedisServer> replicas() {
		List<NodeEntry> view = view(anyLive());
		return nodes.stream()
				.filter(n -> view.stream().anyMatch(e -> e.id().equals(id(n)) && e.isReplica()))
				.toList();
	}

	/** {@code 127.0.0.1:<port>} of every node, e.g. for {@code spring.data.redis.cluster.nodes}. */
	public List<String> seedNodes() {
		return nodes.stream().map(RedisCluster::address).toList();
	}

	/** The cluster node id of a node (it survives restarts: it is kept in the node's nodes.conf). */
	public String nodeId(RedisServer node) {
		return id(node);
	}

	/**
	 * The master serving {@code key}'s slot, according to the first live node that names a live
	 * master for it (or, if none does, e.g. after a master died and before its replica took over,
	 * the master they name).
	 */
	public RedisServer masterFor(String key) {
		int slot = slotOf(key);
		RedisServer named = null;
		for (RedisServer asked : live()) {
			for (NodeEntry entry : view(asked)) {
				if (entry.isMaster() && entry.slots().get(slot)) {
					RedisServer owner = node(entry.id());
					if (isLive(owner)) {
						return owner;
					}
					named = named != null ? named : owner;
				}
			}
		}
		if (named == null) {
			throw new IllegalStateException("No node serves slot " + slot + " of key '" + key + "'");
		}
		return named;
	}

	/** The live replica of {@code master}, as a live node sees it now; empty if it has none. */
	public Optional<RedisServer> replicaOf(RedisServer master) {
		String masterId = id(master);
		for (NodeEntry entry : view(anyLive())) {
			if (entry.isReplica() && masterId.equals(entry.masterId()) && byId.containsKey(entry.id()) && isLive(node(entry.id()))) {
				return Optional.of(node(entry.id()));
			}
		}
		return Optional.empty();
	}

	/**
	 * Kills a node with SIGKILL (see {@link RedisServer#kill()}), after noting the slots it serves
	 * for {@link #awaitPromotion(RedisServer, Duration)}. Its directory, with nodes.conf, stays.
	 */
	public void kill(RedisServer node) {
		requireMember(node);
		List<RedisServer> live = live();
		if (!live.isEmpty()) {
			try {
				remember(view(live.get(0)));
			} catch (RuntimeException e) {
				// best effort: the last agreed view is remembered anyway
			}
		}
		node.kill();
	}

	/**
	 * Starts a stopped or killed node again on its port and directory. It reads its nodes.conf and
	 * rejoins: a master that was replaced comes back as a replica of its successor (with no data
	 * until it has synced). Does not wait for that: see {@link #awaitHealthy(Duration)}.
	 */
	public void restart(RedisServer node) {
		requireMember(node);
		node.restart();
	}

	/**
	 * Waits until another node serves all slots {@code killedMaster} served (when last seen
	 * healthy, or when killed through {@link #kill(RedisServer)}), every live node agrees on it and
	 * reports {@code cluster_state:ok}, and it reports itself as master.
	 *
	 * @return the new master
	 * @throws IllegalArgumentException if {@code killedMaster} was not known to serve slots
	 * @throws IllegalStateException if that does not happen within {@code timeout}
	 */
	public RedisServer awaitPromotion(RedisServer killedMaster, Duration timeout) {
		requireMember(killedMaster);
		String killedId = id(killedMaster);
		BitSet slots = lastKnownSlots.get(killedId);
		if (slots == null || slots.isEmpty()) {
			throw new IllegalArgumentException(address(killedMaster) + " served no slots when last seen");
		}
		return Await.until(timeout, "promoted a successor of " + address(killedMaster), () -> promotionProbe(killedId, slots));
	}

	/**
	 * Waits until every live node reports {@code cluster_state:ok}, knows every other live node as
	 * connected and not failing, all agree on who is master of which slots and who replicates whom,
	 * live masters serve all slots, and every live replica's link to its master is up on both ends
	 * (the replica reports it up, the master lists it online). Nodes that are down are ignored: a
	 * cluster can be healthy with a dead node.
	 */
	public void awaitHealthy(Duration timeout) {
		Await.until(timeout, "healthy", this::healthProbe);
	}

	/** Stops all nodes and deletes their directories. Idempotent. */
	@Override
	public void close() {
		closed = true;
		RuntimeException failure = null;
		for (RedisServer node : nodes) {
			try {
				node.close();
			} catch (RuntimeException e) {
				if (failure == null) {
					failure = e;
				} else {
					failure.addSuppressed(e);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	@Override
	public String toString() {
		return "RedisCluster[" + nodes.stream()
				.map(node -> address(node) + (node.isPaused() ? " paused" : node.isRunning() ? "" : " down"))
				.collect(Collectors.joining(", ")) + ", node timeout " + nodeTimeout.toMillis() + " ms]";
	}

	/** Revives nodes a test left down or paused and waits until healthy; for the extension. */
	void ensureReady() {
		if (closed) {
			throw new IllegalStateException("Closed: " + this);
		}
		for (RedisServer node : nodes) {
			if (node.isPaused()) {
				node.resume();
			}
			if (!node.isRunning()) {
				node.restart();
			}
		}
		awaitHealthy(DEFAULT_HEALTH_TIMEOUT);
	}

	private void form(Duration timeout) {
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

	private Probe<Boolean> healthProbe() {
		List<RedisServer> live = live();
		if (live.isEmpty()) {
			return Probe.notYet("no node is live");
		}
		Map<String, String> agreed = null;
		RedisServer agreedBy = null;
		List<NodeEntry> lastView = List.of();
		for (RedisServer asked : live) {
			String state = clusterState(asked);
			if (!"ok".equals(state)) {
				return Probe.notYet(address(asked) + " reports cluster_state:" + state);
			}
			List<NodeEntry> view = view(asked);
			Map<String, String> roles = new LinkedHashMap<>();
			BitSet served = new BitSet(SLOTS);
			for (RedisServer node : live) {
				NodeEntry entry = find(view, id(node));
				if (entry == null) {
					return Probe.notYet(address(asked) + " does not know " + address(node));
				}
				if (entry.isFailing() || !entry.connected()) {
					return Probe.notYet(address(asked) + " sees " + address(node) + " as " + entry.flags() + (entry.connected() ? "" : ", disconnected"));
				}
				String masterId = entry.masterId();
				roles.put(address(node), entry.isReplica() && masterId != null
						? "replica of " + (byId.containsKey(masterId) ? address(node(masterId)) : masterId)
						: "master of " + ranges(entry.slots()));
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
			NodeEntry entry = Objects.requireNonNull(find(lastView, id(node)));
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

	private Probe<RedisServer> promotionProbe(String killedId, BitSet slots) {
		List<RedisServer> live = live();
		RedisServer successor = null;
		List<NodeEntry> lastView = List.of();
		for (RedisServer asked : live) {
			String state = clusterState(asked);
			if (!"ok".equals(state)) {
				return Probe.notYet(address(asked) + " reports cluster_state:" + state);
			}
			List<NodeEntry> view = view(asked);
			NodeEntry owner = null;
			for (NodeEntry entry : view) {
				if (entry.isMaster() && entry.slots().intersects(slots)) {
					BitSet missing = (BitSet) slots.clone();
					missing.andNot(entry.slots());
					if (owner != null || !missing.isEmpty()) {
						return Probe.notYet(address(asked) + " sees the slots " + ranges(slots) + " split");
					}
					owner = entry;
				}
			}
			if (owner == null || owner.id().equals(killedId)) {
				return Probe.notYet(address(asked) + " sees " + ranges(slots) + " served by "
						+ (owner == null ? "nobody" : "the old master"));
			}
			RedisServer candidate = node(owner.id());
			if (!isLive(candidate)) {
				return Probe.notYet(address(asked) + " sees " + ranges(slots) + " served by " + address(candidate) + ", which is down");
			}
			if (successor == null) {
				successor = candidate;
			} else if (successor != candidate) {
				return Probe.notYet("nodes disagree on who serves " + ranges(slots) + ": " + address(successor) + " or " + address(candidate));
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

	private void remember(List<NodeEntry> view) {
		for (NodeEntry entry : view) {
			if (entry.isMaster()) {
				lastKnownSlots.put(entry.id(), (BitSet) entry.slots().clone());
			}
		}
	}

	private static @Nullable String clusterState(RedisServer node) {
		return field((String) Objects.requireNonNull(node.execute(PROBE_TIMEOUT, "CLUSTER", "INFO")), "cluster_state");
	}

	private static List<NodeEntry> view(RedisServer node) {
		return NodeEntry.parseAll((String) Objects.requireNonNull(node.execute(PROBE_TIMEOUT, "CLUSTER", "NODES")));
	}

	private static @Nullable NodeEntry find(List<NodeEntry> view, String id) {
		for (NodeEntry entry : view) {
			if (entry.id().equals(id)) {
				return entry;
			}
		}
		return null;
	}

	private List<RedisServer> live() {
		return nodes.stream().filter(RedisCluster::isLive).toList();
	}

	private RedisServer anyLive() {
		List<RedisServer> live = live();
		if (live.isEmpty()) {
			throw new IllegalStateException("No live node in " + this);
		}
		return live.get(0);
	}

	private static boolean isLive(RedisServer node) {
		return node.isRunning() && !node.isPaused();
	}

	private String id(RedisServer node) {
		String id = ids.get(node);
		if (id == null) {
			throw new IllegalArgumentException(node + " is not a node of " + this);
		}
		return id;
	}

	private RedisServer node(String id) {
		RedisServer node = byId.get(id);
		if (node == null) {
			throw new IllegalStateException("Unknown node id " + id + " in " + this);
		}
		return node;
	}

	private void requireMember(RedisServer node) {
		id(node);
	}

	private static String address(RedisServer node) {
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

	private static String ranges(BitSet slots) {
		StringBuilder text = new StringBuilder();
		for (int from = slots.nextSetBit(0); from >= 0; from = slots.nextSetBit(from)) {
			int to = slots.nextClearBit(from) - 1;
			text.append(text.isEmpty() ? "" : ",").append(from).append(to > from ? "-" + to : "");
			from = to + 1;
		}
		return text.isEmpty() ? "no slots" : text.toString();
	}

	private static Duration remaining(long deadline) {
		return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
	}

	private static int indexOf(byte[] bytes, byte b, int from) {
		for (int i = from; i < bytes.length; i++) {
			if (bytes[i] == b) {
				return i;
			}
		}
		return -1;
	}

	/** CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster specifies. */
	static int crc16(byte[] bytes, int from, int to) {
		int crc = 0;
		for (int i = from; i < to; i++) {
			crc ^= (bytes[i] & 0xFF) << 8;
			for (int bit = 0; bit < 8; bit++) {
				crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
			}
		}
		return crc & 0xFFFF;
	}

	/** One line of {@code CLUSTER NODES}. */
	private record NodeEntry(String id, Set<String> flags, @Nullable String masterId, boolean connected, BitSet slots) {

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
		static List<NodeEntry> parseAll(String text) {
			List<NodeEntry> entries = new ArrayList<>();
			for (String line : text.split("\r?\n")) {
				if (line.isBlank()) {
					continue;
				}
				String[] fields = line.trim().split(" ");
				BitSet slots = new BitSet(SLOTS);
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
				entries.add(new NodeEntry(fields[0], Set.of(fields[2].split(",")), "-".equals(fields[3]) ? null : fields[3],
						myself || "connected".equals(fields[7]), slots));
			}
			return entries;
		}
	}

	/** Configures a cluster before starting it. */
	public static final class Builder {

		private @Nullable RedisBinary binary;
		private int masters = 3;
		private Duration nodeTimeout = DEFAULT_NODE_TIMEOUT;
		private Duration startTimeout = DEFAULT_START_TIMEOUT;
		private final List<String[]> config = new ArrayList<>();

		private Builder() {
		}

		/** The binary every node runs; default {@link RedisBinary#detect()}. */
		public Builder binary(RedisBinary binary) {
			this.binary = Objects.requireNonNull(binary, "binary");
			return this;
		}

		/** Runs the binary shipped in the embedded-redis jar (Redis 6.2). */
		public Builder embedded() {
			return binary(RedisBinary.embedded());
		}

		/** How many masters (each gets one replica); default 3, the least that can fail over. */
		public Builder masters(int masters) {
			if (masters < 1 || masters > SLOTS) {
				throw new IllegalArgumentException("masters must be in 1.." + SLOTS + ": " + masters);
			}
			this.masters = masters;
			return this;
		}

		/**
		 * {@code cluster-node-timeout}: how long a node may not answer before it is suspected, so
		 * about how long a failover takes to start. Default 2 s: short, yet a loaded machine does
		 * not make nodes miss it and fail over by mistake.
		 */
		public Builder nodeTimeout(Duration nodeTimeout) {
			if (nodeTimeout.toMillis() < 100) {
				throw new IllegalArgumentException("nodeTimeout must be at least 100 ms: " + nodeTimeout);
			}
			this.nodeTimeout = nodeTimeout;
			return this;
		}

		/** How long starting the nodes and forming the cluster may take in all; default 60 s. */
		public Builder startTimeout(Duration startTimeout) {
			if (startTimeout.isNegative() || startTimeout.isZero()) {
				throw new IllegalArgumentException("startTimeout must be positive: " + startTimeout);
			}
			this.startTimeout = startTimeout;
			return this;
		}

		/** A config directive for every node, as {@link RedisServer.Builder#config(String, String...)}. */
		public Builder config(String name, String... values) {
			String[] directive = new String[values.length + 1];
			directive[0] = name;
			System.arraycopy(values, 0, directive, 1, values.length);
			config.add(directive);
			return this;
		}

		/** Starts the nodes and waits until the cluster is healthy with every replica in sync. */
		public RedisCluster start() {
			long deadline = System.nanoTime() + startTimeout.toNanos();
			RedisBinary resolved = binary != null ? binary : RedisBinary.detect();
			List<RedisServer.Builder> builders = new ArrayList<>();
			for (int i = 0; i < 2 * masters; i++) {
				builders.add(node(resolved));
			}
			List<RedisServer> started = RedisServer.startAll(builders);
			try {
				RedisCluster cluster = new RedisCluster(started, masters, nodeTimeout);
				cluster.form(remaining(deadline));
				return cluster;
			} catch (RuntimeException e) {
				for (RedisServer node : started) {
					try {
						node.close();
					} catch (RuntimeException suppressed) {
						e.addSuppressed(suppressed);
					}
				}
				throw e;
			}
		}

		private RedisServer.Builder node(RedisBinary resolved) {
			RedisServer.Builder node = RedisServer.builder().binary(resolved)
					.config("cluster-enabled", "yes")
					.config("cluster-config-file", "nodes.conf") // in the node's directory, kept across restarts
					.config("cluster-node-timeout", Long.toString(nodeTimeout.toMillis()))
					.config("cluster-announce-ip", RedisServer.HOST)
					// a replica may take over however long it was cut off: a test must not depend on timing here
					.config("cluster-replica-validity-factor", "0")
					// a replica (or a returning master) syncs at once, not after the default delay of 5 s
					.config("repl-diskless-sync", "yes")
					.config("repl-diskless-sync-delay", "0");
			for (String[] directive : config) {
				node.config(directive[0], Arrays.copyOfRange(directive, 1, directive.length));
			}
			return node;
		}
	}
}
