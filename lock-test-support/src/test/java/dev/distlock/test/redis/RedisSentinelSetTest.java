package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** One sentinel set for the class: it takes seconds to form; the failover test runs last. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisSentinelSetTest {

	private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(30);
	/** Sentinels make a returning master a replica about 10 s after its return (8 s wait, INFO every 10 s). */
	private static final Duration REJOIN_TIMEOUT = Duration.ofSeconds(45);

	private static RedisSentinelSet set;

	@BeforeAll
	static void startSentinels() {
		long start = System.nanoTime();
		set = RedisSentinelSet.start();
		report("formed", start, set.master());
	}

	@AfterAll
	static void closeSentinels() {
		if (set != null) {
			set.close();
		}
	}

	@Test
	@Order(1)
	void formsWithSentinelsThatAgreeOnTheMasterAndSeeTheReplicaAndEachOther() throws Exception {
		assertThat(set.master()).isSameAs(set.nodes().get(0));
		assertThat(set.replica()).isSameAs(set.nodes().get(1));
		assertThat(set.masterName()).isEqualTo(RedisSentinelSet.DEFAULT_MASTER_NAME);
		assertThat(set.sentinelNodes()).containsExactlyElementsOf(
				set.sentinels().stream().map(sentinel -> "127.0.0.1:" + sentinel.port()).toList());
		assertFormed(set);

		setReplicated(set.master(), "k", "v");
		assertThat(set.replica().execute("GET", "k")).isEqualTo("v");
	}

	@Test
	@Order(2)
	void killedMasterIsReplacedByTheReplicaWithTheDataAndRejoinsAsItsReplica() throws Exception {
		RedisServer master = set.master();
		RedisServer promoted = assertFailsOver(set);

		long restarted = System.nanoTime();
		set.restart(master);
		set.awaitHealthy(REJOIN_TIMEOUT);
		report("took back the old master", restarted, promoted);

		assertThat(set.master()).isSameAs(promoted);
		assertThat(set.replica()).isSameAs(master);
		assertThat(role(master)).isEqualTo("slave");
		assertThat(RedisCluster.field(info(master), "master_port")).isEqualTo(Integer.toString(promoted.port()));
		assertThat(master.execute("GET", "failover-key")).isEqualTo("before");
		assertFormed(set);
	}

	@Test
	@Order(3)
	void embeddedRedis62RunsSentinelsThatFailOverToo() throws Exception {
		long start = System.nanoTime();
		try (RedisSentinelSet embedded = RedisSentinelSet.builder().embedded().masterName("embedded").start()) {
			report("formed", start, embedded.master());
			assertThat(embedded.masterName()).isEqualTo("embedded");
			assertThat(embedded.nodes()).allSatisfy(node -> assertThat(node.version()).startsWith("6.2."));
			assertThat(embedded.sentinels()).allSatisfy(sentinel -> {
				assertThat(sentinel.version()).startsWith("6.2.");
				assertThat(RedisCluster.field((String) sentinel.execute("INFO", "server"), "redis_mode")).isEqualTo("sentinel");
			});
			assertFormed(embedded);
			assertFailsOver(embedded);
		}
	}

	/** Kills the master: the sentinels promote the replica, which has the data written before. */
	private static RedisServer assertFailsOver(RedisSentinelSet set) throws IOException {
		RedisServer master = set.master();
		RedisServer replica = set.replica();
		setReplicated(master, "failover-key", "before");

		long killed = System.nanoTime();
		set.kill(master);
		RedisServer promoted = set.awaitPromotion(master, FAILOVER_TIMEOUT);
		report("failed over", killed, promoted);

		assertThat(master.isRunning()).isFalse();
		assertThat(promoted).isSameAs(replica);
		assertThat(set.master()).isSameAs(promoted);
		assertThat(set.replica()).isSameAs(master);
		assertThat(role(promoted)).isEqualTo("master");
		assertThat(promoted.execute("GET", "failover-key")).isEqualTo("before");
		return promoted;
	}

	/** Every sentinel names the same master, sees its replica and the two other sentinels. */
	private static void assertFormed(RedisSentinelSet set) {
		RedisServer master = set.master();
		RedisServer replica = set.replica();
		assertThat(master).isNotSameAs(replica);
		assertThat(set.sentinels()).hasSize(3).allSatisfy(sentinel -> {
			assertThat(sentinel.isSentinel()).isTrue();
			assertThat(sentinel.execute("SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.masterName()))
					.isEqualTo(List.of("127.0.0.1", Integer.toString(master.port())));
			Map<String, String> state = fields(sentinel.execute("SENTINEL", "MASTER", set.masterName()));
			assertThat(state).containsEntry("flags", "master").containsEntry("num-slaves", "1")
					.containsEntry("num-other-sentinels", "2").containsEntry("quorum", "2");
			assertThat((String) sentinel.execute("SENTINEL", "CKQUORUM", set.masterName())).startsWith("OK 3 usable Sentinels");
		});
		assertThat(role(master)).isEqualTo("master");
		assertThat(role(replica)).isEqualTo("slave");
		assertThat(RedisCluster.field(info(replica), "master_port")).isEqualTo(Integer.toString(master.port()));
		assertThat(RedisCluster.field(info(replica), "master_link_status")).isEqualTo("up");
	}

	private static String role(RedisServer node) {
		return RedisCluster.field(info(node), "role");
	}

	private static String info(RedisServer node) {
		return (String) node.execute("INFO", "replication");
	}

	private static Map<String, String> fields(Object reply) {
		List<?> list = (List<?>) reply;
		Map<String, String> map = new HashMap<>();
		for (int i = 0; i + 1 < list.size(); i += 2) {
			map.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
		}
		return map;
	}

	/** SET, then WAIT on the same connection: WAIT only waits for that connection's own writes. */
	private static void setReplicated(RedisServer master, String key, String value) throws IOException {
		try (RespConnection connection = RespConnection.open(master.host(), master.port())) {
			assertThat(connection.call("SET", key, value)).isEqualTo("OK");
			assertThat(connection.call("WAIT", "1", "2000")).as("replicas that acknowledged the write").isEqualTo(1L);
		}
	}

	private static void report(String what, long startNanos, RedisServer node) {
		System.out.printf("RedisSentinelSet (redis %s, %s) %s in %d ms%n", node.version(), node.binary().source(), what,
				Duration.ofNanos(System.nanoTime() - startNanos).toMillis());
	}
}
