package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

class RedisTopologyExtensionTest {

	@Test
	void injectsOneTopologyOfEachKindPerClassRevivesWhatATestKilledAndClosesThemAfterTheClass() {
		Sample.seen.clear();
		Events events = EngineTestKit.engine("junit-jupiter").selectors(selectClass(Sample.class)).execute().testEvents();

		assertThat(events.failed().stream().map(event -> event.getRequiredPayload(TestExecutionResult.class).getThrowable()
				.map(Throwable::toString).orElse("?"))).isEmpty();
		events.assertStatistics(stats -> stats.started(3).succeeded(3));
		assertThat(Sample.seen).hasSize(5);
		for (Object topology : Sample.seen) {
			List<RedisServer> processes = topology instanceof RedisCluster cluster ? cluster.nodes()
					: Stream.concat(((RedisSentinelSet) topology).nodes().stream(), ((RedisSentinelSet) topology).sentinels().stream()).toList();
			assertThat(processes).allSatisfy(process -> {
				assertThat(process.isRunning()).isFalse();
				assertThat(process.directory()).doesNotExist();
			});
		}
	}

	@ExtendWith(RedisTopologyExtension.class)
	@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
	static class Sample {

		static final List<Object> seen = new CopyOnWriteArrayList<>();

		@Test
		@Order(1)
		void killsAReplicaAndASentinel(RedisCluster cluster, RedisSentinelSet sentinels) {
			seen.add(cluster);
			seen.add(sentinels);
			cluster.kill(cluster.replicas().get(0));
			sentinels.kill(sentinels.sentinels().get(0));
		}

		@Test
		@Order(2)
		void getsTheSameTopologiesBackWhole(RedisCluster cluster, RedisSentinelSet sentinels) {
			assertThat(cluster).isSameAs(seen.get(0));
			assertThat(sentinels).isSameAs(seen.get(1));
			seen.add(cluster);
			seen.add(sentinels);
			assertThat(cluster.nodes()).allMatch(RedisServer::isRunning);
			assertThat(cluster.replicas()).hasSize(3);
			assertThat(sentinels.sentinels()).allMatch(RedisServer::isRunning);
			assertThat(sentinels.master().execute("SET", "k", "v")).isEqualTo("OK");
		}

		@Test
		@Order(3)
		void embeddedAnnotationSelectsTheEmbeddedBinary(@EmbeddedRedis RedisSentinelSet embedded, RedisSentinelSet detected) {
			seen.add(embedded);
			assertThat(embedded).isNotSameAs(detected);
			assertThat(embedded.master().binary().source()).isEqualTo(RedisBinary.Source.EMBEDDED);
			assertThat(embedded.sentinels()).allSatisfy(sentinel -> assertThat(sentinel.version()).startsWith("6.2."));
		}
	}
}
