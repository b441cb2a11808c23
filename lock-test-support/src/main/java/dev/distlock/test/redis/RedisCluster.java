package dev.distlock.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 * <p>Forming the cluster and reading its state are {@link ClusterTopology}'s; the slot of a key is
 * {@link ClusterSlots}'s.
 *
 * <p>A node is <em>live</em> when its process runs and is not paused. Failover needs at least 3
 * masters (a majority of masters elects the replica).
 */
public final class RedisCluster implements AutoCloseable {

	/** The number of hash slots. */
	public static final int SLOTS = 16384;

	private static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(2000);
	private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(60);
	private static final Duration DEFAULT_HEALTH_TIMEOUT = Duration.ofSeconds(30);

	private final List<RedisServer> nodes;
	private final Duration nodeTimeout;
	private final ClusterTopology topology;
	private volatile boolean closed;

	private RedisCluster(List<RedisServer> nodes, int masterCount, Duration nodeTimeout) {
		this.nodes = List.copyOf(nodes);
		this.nodeTimeout = nodeTimeout;
		this.topology = new ClusterTopology(this, nodes, masterCount);
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
		return ClusterSlots.slotOf(key);
	}

	/** All nodes, in start order: the first masters, then their replicas (roles change on failover). */
	public List<RedisServer> nodes() {
		return nodes;
	}

	/** The nodes serving slots, ordered by their first slot, as a live node sees them now. */
	public List<RedisServer> masters() {
		List<ClusterNodeEntry> view = topology.view(topology.anyLive());
		return view.stream()
				.filter(e -> e.isMaster() && !e.slots().isEmpty() && topology.byId.containsKey(e.id()))
				.sorted(Comparator.comparingInt(e -> e.slots().nextSetBit(0)))
				.map(e -> topology.node(e.id()))
				.toList();
	}

	/** The nodes flagged as replicas, in start order, as a live node sees them now. */
	public List<RedisServer> replicas() {
		List<ClusterNodeEntry> view = topology.view(topology.anyLive());
		return nodes.stream()
				.filter(n -> view.stream().anyMatch(e -> e.id().equals(topology.id(n)) && e.isReplica()))
				.toList();
	}

	/** {@code 127.0.0.1:<port>} of every node, e.g. for {@code spring.data.redis.cluster.nodes}. */
	public List<String> seedNodes() {
		return nodes.stream().map(ClusterTopology::address).toList();
	}

	/** The cluster node id of a node (it survives restarts: it is kept in the node's nodes.conf). */
	public String nodeId(RedisServer node) {
		return topology.id(node);
	}

	/**
	 * The master serving {@code key}'s slot, according to the first live node that names a live
	 * master for it (or, if none does, e.g. after a master died and before its replica took over,
	 * the master they name).
	 */
	public RedisServer masterFor(String key) {
		int slot = slotOf(key);
		RedisServer named = null;
		for (RedisServer asked : topology.live()) {
			for (ClusterNodeEntry entry : topology.view(asked)) {
				if (entry.isMaster() && entry.slots().get(slot)) {
					RedisServer owner = topology.node(entry.id());
					if (ClusterTopology.isLive(owner)) {
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
		String masterId = topology.id(master);
		for (ClusterNodeEntry entry : topology.view(topology.anyLive())) {
			if (entry.isReplica() && masterId.equals(entry.masterId()) && topology.byId.containsKey(entry.id()) && ClusterTopology.isLive(topology.node(entry.id()))) {
				return Optional.of(topology.node(entry.id()));
			}
		}
		return Optional.empty();
	}

	/**
	 * Kills a node with SIGKILL (see {@link RedisServer#kill()}), after noting the slots it serves
	 * for {@link #awaitPromotion(RedisServer, Duration)}. Its directory, with nodes.conf, stays.
	 */
	public void kill(RedisServer node) {
		topology.requireMember(node);
		List<RedisServer> live = topology.live();
		if (!live.isEmpty()) {
			try {
				topology.remember(topology.view(live.get(0)));
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
		topology.requireMember(node);
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
		topology.requireMember(killedMaster);
		String killedId = topology.id(killedMaster);
		BitSet slots = topology.lastKnownSlots.get(killedId);
		if (slots == null || slots.isEmpty()) {
			throw new IllegalArgumentException(ClusterTopology.address(killedMaster) + " served no slots when last seen");
		}
		return Await.until(timeout, "promoted a successor of " + ClusterTopology.address(killedMaster), () -> topology.promotionProbe(killedId, slots));
	}

	/**
	 * Waits until every live node reports {@code cluster_state:ok}, knows every other live node as
	 * connected and not failing, all agree on who is master of which slots and who replicates whom,
	 * live masters serve all slots, and every live replica's link to its master is up on both ends
	 * (the replica reports it up, the master lists it online). Nodes that are down are ignored: a
	 * cluster can be healthy with a dead node.
	 */
	public void awaitHealthy(Duration timeout) {
		Await.until(timeout, "healthy", topology::healthProbe);
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
				.map(node -> ClusterTopology.address(node) + (node.isPaused() ? " paused" : node.isRunning() ? "" : " down"))
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

	/** A field of an INFO-style reply ({@code name:value} lines). */
	static @Nullable String field(String info, String name) {
		return ClusterTopology.field(info, name);
	}

	/**
	 * Whether a master's {@code INFO replication} lists the replica on {@code port} as online. A
	 * replica reports its link up as soon as it has loaded the snapshot; the master streams writes
	 * to it only once it has acknowledged that, and a write made in between reaches the replica a
	 * little later.
	 */
	static boolean listsOnlineReplica(String masterReplication, int port) {
		return ClusterTopology.listsOnlineReplica(masterReplication, port);
	}

	/** CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster specifies. */
	static int crc16(byte[] bytes, int from, int to) {
		return ClusterSlots.crc16(bytes, from, to);
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
				cluster.topology.form(ClusterTopology.remaining(deadline));
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
