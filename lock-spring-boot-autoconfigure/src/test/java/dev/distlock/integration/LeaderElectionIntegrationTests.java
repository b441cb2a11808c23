package dev.distlock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.autoconfigure.LockRegistryAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.interceptor.RedisContextFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Spring Integration's leader election on this engine: three application contexts (three instances, each with its own
 * Redis client and lock service) on one real {@code redis-server}, each with a {@link LockRegistryLeaderInitiator} on the
 * auto-configured {@link LockServiceLockRegistry}. Exactly one is leader at a time, and when the leader stops, another
 * takes over.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LeaderElectionIntegrationTests extends RedisContextFixture {

	/** Far longer than any re-election must take, so that a re-election does not merely wait for the lease to expire. */
	private static final String TTL = "20s";

	/** Granted minus revoked, per instance: the instances that think they lead. */
	private final Map<String, AtomicInteger> leading = new ConcurrentHashMap<>();

	/** Grants to an instance while another one had been granted and not yet revoked. */
	private final AtomicInteger overlappingGrants = new AtomicInteger();

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	@AfterEach
	void closeInstances() {
		this.instances.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void oneLeaderAmongThreeAndAnotherWhenTheLeaderClosesItsContext() {
		for (String id : List.of("a", "b", "c")) {
			this.instances.add(start(id));
		}
		assertThat(this.instances.get(0).getBean(LockRegistry.class)).isInstanceOf(LockServiceLockRegistry.class);
		String first = awaitOneLeader();
		// it stays the only one over several heart beats
		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> leaders().equals(List.of(first)));
		long closedAt = System.nanoTime();
		instance(first).close();
		String second = awaitOneLeader();
		Duration reelection = Duration.ofNanos(System.nanoTime() - closedAt);
		assertThat(second).isNotEqualTo(first);
		// well within the 20s lease: the closing leader's lock was released, not left to expire
		assertThat(reelection).isLessThan(Duration.ofSeconds(10));
		System.out.println("Re-elected " + second + " after closing leader " + first + "'s context in "
				+ reelection.toMillis() + "ms");
		instance(second).getBean(LockRegistryLeaderInitiator.class).stop();
		String third = awaitOneLeader();
		assertThat(third).isNotIn(first, second);
		assertThat(this.overlappingGrants).hasValue(0);
	}

	private String awaitOneLeader() {
		await().atMost(Duration.ofSeconds(15)).until(() -> leaders().size() == 1);
		return leaders().get(0);
	}

	/** The instances whose running initiator says it leads, by id. */
	private List<String> leaders() {
		List<String> leaders = new ArrayList<>();
		for (ConfigurableApplicationContext instance : this.instances) {
			if (instance.isActive()) {
				LockRegistryLeaderInitiator initiator = instance.getBean(LockRegistryLeaderInitiator.class);
				if (initiator.isRunning() && initiator.getContext().isLeader()) {
					leaders.add(instance.getEnvironment().getProperty("instance.id"));
				}
			}
		}
		return leaders;
	}

	private ConfigurableApplicationContext instance(String id) {
		return this.instances.stream()
			.filter(instance -> id.equals(instance.getEnvironment().getProperty("instance.id")))
			.findFirst()
			.orElseThrow();
	}

	private ConfigurableApplicationContext start(String id) {
		return new SpringApplicationBuilder(Instance.class).web(WebApplicationType.NONE)
			.properties("instance.id=" + id, "spring.data.redis.host=" + redis.host(),
					"spring.data.redis.port=" + redis.port(), "spring.data.redis.timeout=2s", "distlock.default-ttl=" + TTL,
					"spring.main.banner-mode=off")
			.initializers(context -> context.getBeanFactory().registerSingleton("leaderRecorder", this))
			.run();
	}

	void granted(String id) {
		for (Map.Entry<String, AtomicInteger> other : this.leading.entrySet()) {
			if (!other.getKey().equals(id) && other.getValue().get() > 0 && instanceRunning(other.getKey())) {
				this.overlappingGrants.incrementAndGet();
			}
		}
		this.leading.computeIfAbsent(id, (key) -> new AtomicInteger()).incrementAndGet();
	}

	/**
	 * Whether that instance's initiator still runs: a stopped one calls its candidate's {@code onRevoked} only after
	 * it unlocked, so a grant to another may come first.
	 */
	private boolean instanceRunning(String id) {
		for (ConfigurableApplicationContext instance : this.instances) {
			if (id.equals(instance.getEnvironment().getProperty("instance.id"))) {
				try {
					return instance.isActive() && instance.getBean(LockRegistryLeaderInitiator.class).isRunning();
				}
				catch (RuntimeException ex) {
					return false; // closed meanwhile
				}
			}
		}
		return false;
	}

	void revoked(String id) {
		this.leading.get(id).decrementAndGet();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
			LockRegistryAutoConfiguration.class })
	static class Instance {

		@Bean
		LockRegistryLeaderInitiator leaderInitiator(LockRegistry lockRegistry, Environment environment,
				LeaderElectionIntegrationTests leaderRecorder) {
			String id = environment.getRequiredProperty("instance.id");
			LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(lockRegistry,
					new DefaultCandidate(id, "leader") {

						@Override
						public void onGranted(Context ctx) {
							leaderRecorder.granted(id);
						}

						@Override
						public void onRevoked(Context ctx) {
							leaderRecorder.revoked(id);
						}

					});
			initiator.setHeartBeatMillis(200);
			return initiator;
		}

	}

}
