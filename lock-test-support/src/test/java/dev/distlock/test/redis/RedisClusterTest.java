package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** One cluster for the class: it takes seconds to form; the failover test runs last. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisClusterTest {

	private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(30);

	private static RedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		long start = System.nanoTime();
		cluster = RedisCluster.start();
		report("formed", start, cluster.nodes().get(0));
	}

	@AfterAll
	static void closeCluster() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	@Order(0)
	void slotOfIsCrc16XmodemOfTheHashTag() {
		assertThat(RedisCluster.crc16("123456789".getBytes(StandardCharsets.US_ASCII), 0, 9)).isEqualTo(0x31C3);
		assertThat(RedisCluster.slotOf("foo")).isEqualTo(12182);
		assertThat(RedisCluster.slotOf("123456789")).isEqualTo(12739);
		assertThat(RedisCluster.slotOf("")).isZero();
		assertThat(RedisCluster.slotOf("{user1000}.following")).isEqualTo(RedisCluster.slotOf("{user1000}.followers"))
				.isEqualTo(RedisCluster.slotOf("user1000"));
		assertThat(RedisCluster.slotOf("foo{}{bar}")).isNotEqualTo(RedisCluster.slotOf("bar")); // empty tag: the whole key
		assertThat(RedisCluster.slotOf("foo{{bar}}zap")).isEqualTo(RedisCluster.slotOf("{bar"));
		assertThat(RedisCluster.slotOf("foo{bar}{zap}")).isEqualTo(RedisCluster.slotOf("bar"));
	}

	@Test
	@Order(1)
	void formsWithEverySlotCoveredAndOneReplicaPerMaster() {
		assertFormed(cluster);
		assertThat(cluster.seedNodes()).containsExactlyElementsOf(
				cluster.nodes().stream().map(node -> "127.0.0.1:" + node.port()).toList());
		assertThat(cluster.nodes()).allSatisfy(node -> assertThat(node.port()).isNotEqualTo(6379));
	}

	@Test
	@Order(2)
	void masterForAgreesWithKeyslotAndEveryOtherMasterRedirects() {
		RedisServer anyNode = cluster.nodes().get(0);
		for (String key : List.of("foo", "", "välue", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}")) {
			assertThat(anyNode.execute("CLUSTER", "KEYSLOT", key)).as(key).isEqualTo((long) RedisCluster.slotOf(key));
		}
		Map<RedisServer, String> keyPerMaster = new LinkedHashMap<>();
		for (int i = 0; keyPerMaster.size() < 3; i++) {
			keyPerMaster.putIfAbsent(cluster.masterFor("key-" + i), "key-" + i);
		}
		assertThat(keyPerMaster.keySet()).containsExactlyInAnyOrderElementsOf(cluster.masters());
		for (Map.Entry<RedisServer, String> entry : keyPerMaster.entrySet()) {
			RedisServer owner = entry.getKey();
			String key = entry.getValue();
			long slot = (Long) anyNode.execute("CLUSTER", "KEYSLOT", key);
			assertThat(owner.execute("SET", key, "on " + owner.port())).isEqualTo("OK");
			for (RedisServer other : cluster.masters()) {
				if (other != owner) {
					assertThatThrownBy(() -> other.execute("GET", key))
							.isInstanceOf(RedisErrorException.class)
							.hasMessage("MOVED " + slot + " 127.0.0.1:" + owner.port());
				}
			}
			assertThat(owner.execute("GET", key)).isEqualTo("on " + owner.port());
		}
	}

	@Test
	@Order(3)
	void killedMasterIsReplacedByItsReplicaWithTheDataAndRejoinsAsItsReplica() throws Exception {
		assertFailsOverAndTakesBackTheOldMaster(cluster);
	}

	@Test
	@Order(4)
	void embeddedRedis62FormsAndFailsOverToo() throws Exception {
		long start = System.nanoTime();
		try (RedisCluster embedded = RedisCluster.builder().embedded().start()) {
			report("formed", start, embedded.nodes().get(0));
			assertThat(embedded.nodes()).allSatisfy(node -> assertThat(node.version()).startsWith("6.2."));
			assertFormed(embedded);
			assertFailsOverAndTakesBackTheOldMaster(embedded);
		}
	}

	/** Kills the master of a key: its replica takes over with the key, and the old master comes back as its replica. */
	private static void assertFailsOverAndTakesBackTheOldMaster(RedisCluster cluster) throws Exception {
		String key = "failover-key";
		RedisServer master = cluster.masterFor(key);
		RedisServer replica = cluster.replicaOf(master).orElseThrow();
		setReplicated(master, key, "before");

		long killed = System.nanoTime();
		cluster.kill(master);
		RedisServer promoted = cluster.awaitPromotion(master, FAILOVER_TIMEOUT);
		report("failed over", killed, master);

		assertThat(master.isRunning()).isFalse();
		assertThat(promoted).isSameAs(replica);
		assertThat(cluster.masterFor(key)).isSameAs(promoted);
		assertThat(cluster.masters()).contains(promoted).doesNotContain(master).hasSize(3);
		assertThat(promoted.execute("GET", key)).isEqualTo("before");
		assertThat(cluster.replicaOf(promoted)).isEmpty();

		long restarted = System.nanoTime();
		cluster.restart(master);
		cluster.awaitHealthy(FAILOVER_TIMEOUT);
		report("took back the old master", restarted, master);

		assertThat(cluster.replicaOf(promoted)).containsSame(master);
		assertThat(cluster.replicas()).contains(master).doesNotContain(promoted);
		assertThat(RedisCluster.field((String) master.execute("INFO", "replication"), "master_port"))
				.isEqualTo(Integer.toString(promoted.port()));
		assertThatThrownBy(() -> master.execute("GET", key)).hasMessageStartingWith("MOVED");
		try (RespConnection connection = RespConnection.open(master.host(), master.port())) {
			assertThat(connection.call("READONLY")).isEqualTo("OK");
			assertThat(connection.call("GET", key)).isEqualTo("before");
		}
		assertFormed(cluster);
	}

	/** Every slot served, by 3 masters with a live replica each, as every node sees it. */
	private static void assertFormed(RedisCluster cluster) {
		assertThat(cluster.nodes()).hasSize(6);
		assertThat(cluster.masters()).hasSize(3);
		assertThat(cluster.replicas()).hasSize(3).doesNotContainAnyElementsOf(cluster.masters());
		Set<RedisServer> replicas = new HashSet<>();
		for (RedisServer master : cluster.masters()) {
			RedisServer replica = cluster.replicaOf(master).orElseThrow();
			replicas.add(replica);
			String replication = (String) replica.execute("INFO", "replication");
			assertThat(RedisCluster.field(replication, "role")).isEqualTo("slave");
			assertThat(RedisCluster.field(replication, "master_port")).isEqualTo(Integer.toString(master.port()));
			assertThat(RedisCluster.field(replication, "master_link_status")).isEqualTo("up");
		}
		assertThat(replicas).containsExactlyInAnyOrderElementsOf(cluster.replicas());
		for (RedisServer node : cluster.nodes()) {
			String info = (String) node.execute("CLUSTER", "INFO");
			assertThat(RedisCluster.field(info, "cluster_state")).isEqualTo("ok");
			assertThat(RedisCluster.field(info, "cluster_slots_assigned")).isEqualTo("16384");
			assertThat(RedisCluster.field(info, "cluster_slots_ok")).isEqualTo("16384");
			assertThat(RedisCluster.field(info, "cluster_known_nodes")).isEqualTo("6");
			assertThat(RedisCluster.field(info, "cluster_size")).isEqualTo("3");
		}
	}

	/** SET, then WAIT on the same connection: WAIT only waits for that connection's own writes. */
	private static void setReplicated(RedisServer master, String key, String value) throws IOException {
		try (RespConnection connection = RespConnection.open(master.host(), master.port())) {
			assertThat(connection.call("SET", key, value)).isEqualTo("OK");
			assertThat(connection.call("WAIT", "1", "2000")).as("replicas that acknowledged the write").isEqualTo(1L);
		}
	}

	private static void report(String what, long startNanos, RedisServer node) {
		System.out.printf("RedisCluster (redis %s, %s) %s in %d ms%n", node.version(), node.binary().source(), what,
				Duration.ofNanos(System.nanoTime() - startNanos).toMillis());
	}
}
