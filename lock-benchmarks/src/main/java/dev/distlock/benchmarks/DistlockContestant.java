package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.redis.RedisLockService;
import dev.distlock.redis.RedisLockServiceBuilder;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** This starter's programmatic API: {@link RedisLockService} on a Lettuce connection factory, default settings. */
final class DistlockContestant implements Contestant {

	private final int replicaAcks;

	/** The seed nodes of a Redis Cluster to lock on instead of the run's server, or empty. */
	private final List<String> clusterNodes;

	DistlockContestant() {
		this(0, List.of());
	}

	private DistlockContestant(int replicaAcks, List<String> clusterNodes) {
		this.replicaAcks = replicaAcks;
		this.clusterNodes = clusterNodes;
	}

	/** This starter with {@code distlock.replica-acks}: for a server with replicas ({@code --replica}). */
	static DistlockContestant withReplicaAcks(int replicas) {
		return new DistlockContestant(replicas, List.of());
	}

	/** This starter on a Redis Cluster ({@code --cluster}), scenario 3 only: its keys spread over the masters. */
	static DistlockContestant onCluster(List<String> seedNodes) {
		return new DistlockContestant(0, List.copyOf(seedNodes));
	}

	@Override
	public String name() {
		if (!this.clusterNodes.isEmpty()) {
			return "distlock, 3-master cluster";
		}
		return (this.replicaAcks > 0) ? "distlock, replica-acks=" + this.replicaAcks : "distlock";
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public Set<Scenario> scenarios() {
		return this.clusterNodes.isEmpty() ? EnumSet.allOf(Scenario.class) : EnumSet.of(Scenario.MANY_KEYS);
	}

	@Override
	public Client open(Target target, Options options) {
		LettuceConnectionFactory factory = this.clusterNodes.isEmpty() ? connectionFactory(target)
				: clusterConnectionFactory(this.clusterNodes);
		RedisLockServiceBuilder builder = RedisLockService.builder(factory)
			.keyPrefix((this.replicaAcks > 0) ? "bench-distlock-acks" : "bench-distlock");
		if (this.replicaAcks > 0) {
			builder.replicaAcks(this.replicaAcks, Duration.ofSeconds(1));
		}
		RedisLockService service = builder.build();
		return new DistlockClient(factory, service, options.ttl(), options.waitTime());
	}

	/** As Boot would create it from {@code spring.data.redis.cluster.nodes}. */
	private static LettuceConnectionFactory clusterConnectionFactory(List<String> seedNodes) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(seedNodes));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/** A connection factory as Spring Boot would create it from {@code spring.data.redis.host/port}. */
	static LettuceConnectionFactory connectionFactory(Target target) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(target.host(), target.port()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	static long heldOrWaitingIn(RedisLockService service) {
		return service.activeLeases().size() + service.waitingThreads();
	}

	private record DistlockClient(LettuceConnectionFactory factory, RedisLockService service, Duration ttl,
			Duration waitTime) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			try (Lease lease = this.service.acquire(key, this.ttl, this.waitTime)) {
				criticalSection.run();
				return true;
			}
			catch (LockAcquisitionTimeoutException ex) {
				return false;
			}
		}

		@Override
		public Hold hold(String key) {
			Lease lease = this.service.tryAcquire(key, this.ttl, Duration.ZERO)
				.orElseThrow(() -> new IllegalStateException("Key " + key + " is held elsewhere"));
			return lease::release;
		}

		@Override
		public long heldOrWaiting() {
			return heldOrWaitingIn(this.service);
		}

		@Override
		public void close() {
			this.service.close();
			this.factory.destroy();
		}

	}

}
