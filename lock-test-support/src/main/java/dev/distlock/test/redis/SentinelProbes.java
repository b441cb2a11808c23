package dev.distlock.test.redis;

import dev.distlock.test.redis.Await.Probe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the sentinels and data nodes of a {@link RedisSentinelSet} say about it: the health and
 * promotion probes its waits poll, and the master as the sentinels name it now. Stateless beyond
 * the fixed members, so every answer is asked of live processes, never remembered.
 */
final class SentinelProbes {

	private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

	/** The sentinel set, named in errors. */
	private final Object owner;
	private final String masterName;
	private final int quorum;
	private final List<RedisServer> dataNodes;
	private final List<RedisServer> sentinels;

	SentinelProbes(Object owner, String masterName, int quorum, List<RedisServer> dataNodes, List<RedisServer> sentinels) {
		this.owner = owner;
		this.masterName = masterName;
		this.quorum = quorum;
		this.dataNodes = List.copyOf(dataNodes);
		this.sentinels = List.copyOf(sentinels);
	}

	Probe<RedisServer> promotionProbe(RedisServer oldMaster) {
		Map<RedisServer, Integer> votes = new HashMap<>();
		List<String> named = new ArrayList<>();
		for (RedisServer sentinel : sentinels) {
			if (isLive(sentinel)) {
				int port = masterPort(sentinel);
				named.add(address(sentinel) + " names " + port);
				if (port != oldMaster.port()) {
					votes.merge(dataNode(port), 1, Integer::sum);
				}
			}
		}
		for (Map.Entry<RedisServer, Integer> vote : votes.entrySet()) {
			RedisServer candidate = vote.getKey();
			if (vote.getValue() >= quorum && isLive(candidate)) {
				String role = role(candidate);
				if (!"master".equals(role)) {
					return Probe.notYet(address(candidate) + " is named by " + vote.getValue() + " sentinels but reports role:" + role);
				}
				return Probe.done(candidate);
			}
		}
		return Probe.notYet(String.join(", ", named));
	}

	Probe<Boolean> healthProbe() {
		RedisServer master = null;
		for (RedisServer sentinel : sentinels) {
			if (!isLive(sentinel)) {
				continue;
			}
			RedisServer named = dataNode(masterPort(sentinel));
			if (master == null) {
				master = named;
			} else if (master != named) {
				return Probe.notYet("sentinels disagree on the master: " + address(master) + " or " + address(named));
			}
			Map<String, String> state = fields(sentinel.execute(PROBE_TIMEOUT, "SENTINEL", "MASTER", masterName));
			if (!"master".equals(state.get("flags"))) {
				return Probe.notYet(address(sentinel) + " flags the master " + state.get("flags"));
			}
			String problem = replicasProblem(sentinel, named);
			if (problem == null) {
				problem = sentinelsProblem(sentinel);
			}
			if (problem != null) {
				return Probe.notYet(problem);
			}
		}
		if (master == null) {
			return Probe.notYet("no sentinel is live");
		}
		if (!isLive(master) || !"master".equals(role(master))) {
			return Probe.notYet("the sentinels' master " + address(master) + " is " + (isLive(master) ? "role:" + role(master) : "down"));
		}
		String masterReplication = info(master);
		for (RedisServer node : dataNodes) {
			if (node != master && isLive(node)) {
				if (!RedisCluster.listsOnlineReplica(masterReplication, node.port())) {
					return Probe.notYet(address(master) + " does not list its replica " + address(node) + " as online yet");
				}
				String replication = info(node);
				if (!"slave".equals(RedisCluster.field(replication, "role"))
						|| !Integer.toString(master.port()).equals(RedisCluster.field(replication, "master_port"))
						|| !"up".equals(RedisCluster.field(replication, "master_link_status"))) {
					return Probe.notYet(address(node) + " reports role:" + RedisCluster.field(replication, "role") + ", master_port:"
							+ RedisCluster.field(replication, "master_port") + ", link " + RedisCluster.field(replication, "master_link_status"));
				}
			}
		}
		return Probe.done(Boolean.TRUE);
	}

	/**
	 * Why {@code sentinel} does not (yet) know every other live data node as a replica that is up,
	 * or null. Its {@code master-link-status} is not asked: a sentinel refreshes it only every 10 s
	 * (every second while the master is down), and the replica's own INFO is the truth.
	 */
	private @Nullable String replicasProblem(RedisServer sentinel, RedisServer master) {
		List<Map<String, String>> replicas = fieldsList(sentinel.execute(PROBE_TIMEOUT, "SENTINEL", "REPLICAS", masterName));
		for (RedisServer node : dataNodes) {
			if (node == master || !isLive(node)) {
				continue;
			}
			Map<String, String> replica = byPort(replicas, node);
			if (replica == null) {
				return address(sentinel) + " does not know the replica " + address(node);
			}
			String flags = Objects.requireNonNullElse(replica.get("flags"), "");
			if (flags.contains("down") || flags.contains("disconnected")) {
				return address(sentinel) + " sees the replica " + address(node) + " as " + flags;
			}
		}
		return null;
	}

	/** Why {@code sentinel} does not (yet) see every other live sentinel, or null. */
	private @Nullable String sentinelsProblem(RedisServer sentinel) {
		List<Map<String, String>> others = fieldsList(sentinel.execute(PROBE_TIMEOUT, "SENTINEL", "SENTINELS", masterName));
		for (RedisServer other : sentinels) {
			if (other == sentinel || !isLive(other)) {
				continue;
			}
			Map<String, String> seen = byPort(others, other);
			if (seen == null) {
				return address(sentinel) + " does not know the sentinel " + address(other);
			}
			String flags = Objects.requireNonNullElse(seen.get("flags"), "");
			if (flags.contains("down") || flags.contains("disconnected")) {
				return address(sentinel) + " sees the sentinel " + address(other) + " as " + flags;
			}
		}
		return null;
	}

	int masterPort(RedisServer sentinel) {
		Object reply = sentinel.execute(PROBE_TIMEOUT, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName);
		if (!(reply instanceof List<?> address) || address.size() != 2) {
			throw new IllegalStateException(address(sentinel) + " does not know the master " + masterName + ": " + reply);
		}
		return Integer.parseInt(String.valueOf(address.get(1)));
	}

	RedisServer dataNode(int port) {
		for (RedisServer node : dataNodes) {
			if (node.port() == port) {
				return node;
			}
		}
		throw new IllegalStateException("A sentinel names port " + port + ", which is no data node of " + owner);
	}

	private static String role(RedisServer node) {
		return Objects.requireNonNullElse(RedisCluster.field(info(node), "role"), "?");
	}

	static String info(RedisServer node) {
		return (String) Objects.requireNonNull(node.execute(PROBE_TIMEOUT, "INFO", "replication"));
	}

	private static @Nullable Map<String, String> byPort(List<Map<String, String>> instances, RedisServer node) {
		for (Map<String, String> instance : instances) {
			if (Integer.toString(node.port()).equals(instance.get("port"))) {
				return instance;
			}
		}
		return null;
	}

	/** A flat {@code [name, value, name, value, ...]} reply as a map. */
	private static Map<String, String> fields(@Nullable Object reply) {
		Map<String, String> map = new HashMap<>();
		if (reply instanceof List<?> list) {
			for (int i = 0; i + 1 < list.size(); i += 2) {
				map.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
			}
		}
		return map;
	}

	private static List<Map<String, String>> fieldsList(@Nullable Object reply) {
		List<Map<String, String>> maps = new ArrayList<>();
		if (reply instanceof List<?> list) {
			for (Object item : list) {
				maps.add(fields(item));
			}
		}
		return maps;
	}

	static boolean isLive(RedisServer node) {
		return node.isRunning() && !node.isPaused();
	}

	static String address(RedisServer node) {
		return RedisServer.HOST + ":" + node.port();
	}
}
