package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.test.redis.RedisSentinelSet;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The master behind the sentinels is killed while the engine holds leases and a waiter waits: the lease that reached
 * the replica survives, the one that did not is reported lost, the waiter gets the lock, and the time from the kill to
 * the first acquisition is printed.
 */
@Tag("failover")
@ExtendWith(RedisTopologyExtension.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SentinelFailoverIntegrationTests {

	private static final Duration PROMOTION_TIMEOUT = Duration.ofSeconds(60);

	private RedisSentinelSet sentinels;

	private LockTestSupport support;

	@BeforeEach
	void sentinels(RedisSentinelSet redis) {
		this.sentinels = redis;
	}

	@AfterEach
	void close() {
		if (this.support != null) {
			this.support.close();
		}
	}

	@Test
	void theUnreplicatedLeaseIsLostAndEverythingElseCarriesOn() throws Exception {
		this.support = LockTestSupport.forSentinels(this.sentinels);
		RedisServer master = this.sentinels.master();
		FailoverScenario.Topology topology = new FailoverScenario.Topology() {
			@Override
			public RedisServer masterFor(String redisKey) {
				return master;
			}

			@Override
			public RedisServer replicaOf(RedisServer node) {
				return SentinelFailoverIntegrationTests.this.sentinels.replica();
			}

			@Override
			public void kill(RedisServer node) {
				SentinelFailoverIntegrationTests.this.sentinels.kill(node);
			}

			@Override
			public RedisServer awaitPromotion(RedisServer killed) {
				return SentinelFailoverIntegrationTests.this.sentinels.awaitPromotion(killed, PROMOTION_TIMEOUT);
			}
		};
		double seconds = FailoverScenario.run(this.support, topology, master, List.of(), promoted -> "sentinel");
		assertThat(seconds).isPositive();
	}

}
