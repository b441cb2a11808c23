package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;

@ExtendWith(RedisServerExtension.class)
class RedisServerExtensionTest {

	private static RedisServer fromBeforeAll;
	private final RedisServer fromConstructor;

	RedisServerExtensionTest(RedisServer redis) {
		this.fromConstructor = redis;
	}

	@BeforeAll
	static void rememberServer(RedisServer redis) {
		fromBeforeAll = redis;
	}

	@BeforeEach
	void flush(RedisServer redis) {
		redis.execute("FLUSHALL");
	}

	@Test
	void injectsOneServerPerClass(RedisServer redis) {
		assertThat(redis).isSameAs(fromBeforeAll).isSameAs(fromConstructor);
		assertThat(redis.execute("PING")).isEqualTo("PONG");
		assertThat(redis.execute("DBSIZE")).isEqualTo(0L);
	}

	@Test
	void embeddedAnnotationOnParameterSelectsTheEmbeddedBinary(@EmbeddedRedis RedisServer embedded, RedisServer detected) {
		assertThat(embedded.binary().source()).isEqualTo(RedisBinary.Source.EMBEDDED);
		assertThat(embedded.version()).startsWith("6.2.");
		assertThat(embedded.port()).isNotEqualTo(detected.port());
		assertThat(detected).isSameAs(fromBeforeAll);
	}

	@Test
	void serversAreClosedAfterTheClassEvenWhenTestsFail() {
		FailingSample.seen.clear();
		EngineTestKit.engine("junit-jupiter").selectors(selectClass(FailingSample.class)).execute()
				.testEvents().assertStatistics(stats -> stats.started(2).failed(1).succeeded(1));

		assertThat(FailingSample.seen).hasSize(2);
		for (RedisServer server : FailingSample.seen) {
			assertThat(server.isRunning()).isFalse();
			assertThat(server.directory()).doesNotExist();
		}
	}

	@Test
	void stoppedOrPausedServerIsRevivedForTheNextTest() {
		EngineTestKit.engine("junit-jupiter").selectors(selectClass(StoppingSample.class)).execute()
				.testEvents().assertStatistics(stats -> stats.started(3).succeeded(3));
	}

	@Nested
	@EmbeddedRedis
	class EmbeddedOnClass {

		@Test
		void injectsAnEmbeddedServer(RedisServer redis) {
			assertThat(redis.binary().source()).isEqualTo(RedisBinary.Source.EMBEDDED);
			assertThat(redis).isNotSameAs(fromBeforeAll);
		}
	}

	static class FailingSample {

		static final List<RedisServer> seen = new CopyOnWriteArrayList<>();

		@RegisterExtension
		static final RedisServerExtension extension = new RedisServerExtension();

		@Test
		void fails(RedisServer redis) {
			seen.add(redis);
			redis.pause();
			fail("intentional");
		}

		@Test
		void passes(@EmbeddedRedis RedisServer redis) {
			seen.add(redis);
		}
	}

	@ExtendWith(RedisServerExtension.class)
	@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
	static class StoppingSample {

		@Test
		@Order(1)
		void stops(RedisServer redis) {
			redis.stop();
		}

		@Test
		@Order(2)
		void pauses(RedisServer redis) {
			assertThat(redis.isRunning()).isTrue();
			redis.pause();
		}

		@Test
		@Order(3)
		void getsAWorkingServer(RedisServer redis) {
			assertThat(redis.isPaused()).isFalse();
			assertThat(redis.execute("PING")).isEqualTo("PONG");
		}
	}
}
