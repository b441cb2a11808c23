package dev.distlock.test.redis;

import dev.distlock.test.redis.Await.Probe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A Sentinel-managed Redis of real {@code redis-server} processes on free loopback ports: one
 * master, one replica and three sentinels ({@code redis-server <config> --sentinel}, quorum 2).
 *
 * <p>Sentinel-aware code must be proven against a master that dies and comes back, on the same
 * binary as the standalone tests ({@link RedisBinary#detect()}, or the embedded 6.2 one). Who is
 * master is always asked of the sentinels ({@code SENTINEL get-master-addr-by-name}), never
 * remembered, so it stays right after a failover. Every process is a {@link RedisServer}, with
 * its deadlines, logs and shutdown hook; each sentinel rewrites its own config file in its own
 * directory, so a restarted sentinel remembers what it learnt.
 *
 * <p>A node is <em>live</em> when its process runs and is not paused. Data nodes keep no data
 * across a restart: a restarted master comes back empty, and the sentinels turn it into a replica
 * of the new master about 10 s later (Sentinel waits 8 s, and asks replicas for INFO every 10 s).
 *
 * <p>What the processes say about the set (the master the sentinels name, the health and
 * promotion probes) is {@link SentinelProbes}'s.
 */
public final class RedisSentinelSet implements AutoCloseable {

	/** The default name the sentinels monitor the master under. */
	public static final String DEFAULT_MASTER_NAME = "distlock";

	private static final int SENTINELS = 3;
	private static final int QUORUM = 2;
	private static final Duration DEFAULT_DOWN_AFTER = Duration.ofMillis(2000);
	private static final Duration DEFAULT_FAILOVER_TIMEOUT = Duration.ofMillis(5000);
	private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(60);
	private static final Duration DEFAULT_HEALTH_TIMEOUT = Duration.ofSeconds(60);

	private final String masterName;
	private final List<RedisServer> dataNodes;
	private final List<RedisServer> sentinels;
	private final SentinelProbes probes;
	private volatile boolean closed;

	private RedisSentinelSet(String masterName, List<RedisServer> dataNodes, List<RedisServer> sentinels) {
		this.masterName = masterName;
		this.dataNodes = List.copyOf(dataNodes);
		this.sentinels = List.copyOf(sentinels);
		this.probes = new SentinelProbes(this, masterName, QUORUM, dataNodes, sentinels);
	}

	/** Starts a master, a replica and three sentinels with {@link RedisBinary#detect()}. */
	public static RedisSentinelSet start() {
		return builder().start();
	}

	public static Builder builder() {
		return new Builder();
	}

	/** The name the sentinels know the master by, e.g. for {@code spring.data.redis.sentinel.master}. */
	public String masterName() {
		return masterName;
	}

	/** The master, as the first live sentinel names it now. */
	public RedisServer master() {
		for (RedisServer sentinel : sentinels) {
			if (SentinelProbes.isLive(sentinel)) {
				return probes.dataNode(probes.masterPort(sentinel));
			}
		}
		throw new IllegalStateException("No live sentinel in " + this);
	}

	/** The data node that is not {@link #master()}. */
	public RedisServer replica() {
		RedisServer master = master();
		return dataNodes.stream().filter(node -> node != master).findFirst().orElseThrow();
	}

	/** The master and the replica, in start order (roles change on failover). */
	public List<RedisServer> nodes() {
		return dataNodes;
	}

	public List<RedisServer> sentinels() {
		return sentinels;
	}

	/** {@code 127.0.0.1:<port>} of every sentinel, e.g. for {@code spring.data.redis.sentinel.nodes}. */
	public List<String> sentinelNodes() {
		return sentinels.stream().map(SentinelProbes::address).toList();
	}

	/** How many sentinels must agree that the master is down before a failover: 2 of 3. */
	public int quorum() {
		return QUORUM;
	}

	/** Kills a data node or sentinel with SIGKILL (see {@link RedisServer#kill()}). */
	public void kill(RedisServer node) {
		requireMember(node);
		node.kill();
	}

	/**
	 * Starts a stopped or killed data node or sentinel again on its port and directory. Does not
	 * wait for the sentinels to take it back: see {@link #awaitHealthy(Duration)}.
	 */
	public void restart(RedisServer node) {
		requireMember(node);
		node.restart();
	}

	/**
	 * Waits until a quorum of live sentinels names a master other than {@code oldMaster} and that
	 * node reports {@code role:master} itself.
	 *
	 * @return the new master
	 * @throws IllegalStateException if that does not happen within {@code timeout}
	 */
	public RedisServer awaitPromotion(RedisServer oldMaster, Duration timeout) {
		requireMember(oldMaster);
		return Await.until(timeout, "promoted a successor of " + SentinelProbes.address(oldMaster), () -> probes.promotionProbe(oldMaster));
	}

	/**
	 * Waits until every live sentinel names the same live master and knows every other live data
	 * node as its replica and every other live sentinel, none as down; that master reports
	 * {@code role:master} and lists every other live data node as an online replica, and those
	 * replicate it with their link up. Nodes that are down are ignored.
	 */
	public void awaitHealthy(Duration timeout) {
		Await.until(timeout, "healthy", probes::healthProbe);
	}

	/** Stops all processes and deletes their directories. Idempotent. */
	@Override
	public void close() {
		closed = true;
		RuntimeException failure = null;
		for (RedisServer node : all()) {
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
		return "RedisSentinelSet[" + masterName + ", data nodes " + describe(dataNodes) + ", sentinels " + describe(sentinels) + "]";
	}

	/** Revives processes a test left down or paused and waits until healthy; for the extension. */
	void ensureReady() {
		if (closed) {
			throw new IllegalStateException("Closed: " + this);
		}
		for (RedisServer node : all()) {
			if (node.isPaused()) {
				node.resume();
			}
			if (!node.isRunning()) {
				node.restart();
			}
		}
		awaitHealthy(DEFAULT_HEALTH_TIMEOUT);
	}

	private List<RedisServer> all() {
		return Stream.concat(dataNodes.stream(), sentinels.stream()).toList();
	}

	private void requireMember(RedisServer node) {
		if (!dataNodes.contains(node) && !sentinels.contains(node)) {
			throw new IllegalArgumentException(node + " is not part of " + this);
		}
	}

	private static String describe(List<RedisServer> nodes) {
		return nodes.stream().map(n -> SentinelProbes.address(n) + (n.isPaused() ? " paused" : n.isRunning() ? "" : " down")).toList().toString();
	}

	/** Configures a sentinel set before starting it. */
	public static final class Builder {

		private @Nullable RedisBinary binary;
		private String masterName = DEFAULT_MASTER_NAME;
		private Duration downAfter = DEFAULT_DOWN_AFTER;
		private Duration failoverTimeout = DEFAULT_FAILOVER_TIMEOUT;
		private Duration startTimeout = DEFAULT_START_TIMEOUT;

		private Builder() {
		}

		/** The binary every process runs; default {@link RedisBinary#detect()}. */
		public Builder binary(RedisBinary binary) {
			this.binary = Objects.requireNonNull(binary, "binary");
			return this;
		}

		/** Runs the binary shipped in the embedded-redis jar (Redis 6.2). */
		public Builder embedded() {
			return binary(RedisBinary.embedded());
		}

		/** The name the sentinels monitor the master under; default {@value RedisSentinelSet#DEFAULT_MASTER_NAME}. */
		public Builder masterName(String masterName) {
			if (masterName.isBlank() || masterName.chars().anyMatch(Character::isWhitespace)) {
				throw new IllegalArgumentException("masterName must be one word: '" + masterName + "'");
			}
			this.masterName = masterName;
			return this;
		}

		/**
		 * {@code down-after-milliseconds}: how long the master may not answer before a sentinel
		 * thinks it down. Default 2 s: short, yet a loaded machine does not make sentinels fail
		 * over by mistake.
		 */
		public Builder downAfter(Duration downAfter) {
			this.downAfter = atLeast(downAfter, 100, "downAfter");
			return this;
		}

		/**
		 * {@code failover-timeout}: how long a sentinel waits to win an election and to promote,
		 * and, doubled, before it tries again after a failed attempt. Default 5 s.
		 */
		public Builder failoverTimeout(Duration failoverTimeout) {
			this.failoverTimeout = atLeast(failoverTimeout, 1000, "failoverTimeout");
			return this;
		}

		/** How long starting all processes and waiting for them to agree may take; default 60 s. */
		public Builder startTimeout(Duration startTimeout) {
			this.startTimeout = atLeast(startTimeout, 1, "startTimeout");
			return this;
		}

		/** Starts the master, its replica and the sentinels, and waits until healthy. */
		public RedisSentinelSet start() {
			long deadline = System.nanoTime() + startTimeout.toNanos();
			RedisBinary resolved = binary != null ? binary : RedisBinary.detect();
			RedisServer master = dataNode(resolved).start();
			List<RedisServer> started = new ArrayList<>(List.of(master));
			try {
				RedisServer replica = dataNode(resolved).config("replicaof", RedisServer.HOST, Integer.toString(master.port())).start();
				started.add(replica);
				// a sentinel learns replicas from the master's INFO, at start and then every 10 s only
				Await.until(remaining(deadline), "the replica connected to the master", () -> {
					String replication = SentinelProbes.info(master);
					return "0".equals(RedisCluster.field(replication, "connected_slaves"))
							? Probe.notYet(SentinelProbes.address(master) + " has no replica yet") : Probe.done(Boolean.TRUE);
				});
				String config = String.join("\n",
						"sentinel monitor " + masterName + " " + RedisServer.HOST + " " + master.port() + " " + QUORUM,
						"sentinel down-after-milliseconds " + masterName + " " + downAfter.toMillis(),
						"sentinel failover-timeout " + masterName + " " + failoverTimeout.toMillis(),
						"sentinel parallel-syncs " + masterName + " 1");
				List<RedisServer> sentinels = RedisServer.startAll(Collections.nCopies(SENTINELS, RedisServer.builder().binary(resolved).sentinel(config)));
				started.addAll(sentinels);
				RedisSentinelSet set = new RedisSentinelSet(masterName, List.of(master, replica), sentinels);
				set.awaitHealthy(remaining(deadline));
				return set;
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

		private static RedisServer.Builder dataNode(RedisBinary resolved) {
			return RedisServer.builder().binary(resolved)
					// a replica (or a returning master) syncs at once, not after the default delay of 5 s
					.config("repl-diskless-sync", "yes")
					.config("repl-diskless-sync-delay", "0");
		}

		private static Duration remaining(long deadline) {
			return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
		}

		private static Duration atLeast(Duration value, long millis, String name) {
			if (value.toMillis() < millis) {
				throw new IllegalArgumentException(name + " must be at least " + millis + " ms: " + value);
			}
			return value;
		}
	}
}
