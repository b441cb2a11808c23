package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.distlock.core.Lease;
import dev.distlock.redis.EnginePathsAccess;
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

	/** Lease scripts and renewals through the template only, no Lettuce-native shortcut ({@code --paths}). */
	private final boolean templateOnly;

	/**
	 * Release messages through the engine's own pub/sub connection rather than Spring Data's
	 * {@code RedisMessageListenerContainer}, the default ({@code --paths}).
	 */
	private final boolean ownSubscription;

	/**
	 * No hand-over of a released lease to a waiting thread of the same process ({@code localHandOvers(0)},
	 * {@code --no-hand-over}): how the blocking row fares without what an asynchronous waiter never gets.
	 */
	private final boolean noHandOver;

	DistlockContestant() {
		this(0, List.of(), false, false);
	}

	private DistlockContestant(int replicaAcks, List<String> clusterNodes, boolean templateOnly,
			boolean ownSubscription) {
		this(replicaAcks, clusterNodes, templateOnly, ownSubscription, false);
	}

	private DistlockContestant(int replicaAcks, List<String> clusterNodes, boolean templateOnly,
			boolean ownSubscription, boolean noHandOver) {
		this.replicaAcks = replicaAcks;
		this.clusterNodes = clusterNodes;
		this.templateOnly = templateOnly;
		this.ownSubscription = ownSubscription;
		this.noHandOver = noHandOver;
	}

	/** This starter without local hand-overs ({@code --no-hand-over}), scenario 2 only. */
	static DistlockContestant withoutLocalHandOvers() {
		return new DistlockContestant(0, List.of(), false, false, true);
	}

	/** This starter with its scripts and renewals through the template only ({@code --paths}). */
	static DistlockContestant templateOnly() {
		return new DistlockContestant(0, List.of(), true, false);
	}

	/** This starter with its release messages through its own pub/sub connection ({@code --paths}). */
	static DistlockContestant ownSubscription() {
		return new DistlockContestant(0, List.of(), false, true);
	}

	/** This starter with {@code distlock.replica-acks}: for a server with replicas ({@code --replica}). */
	static DistlockContestant withReplicaAcks(int replicas) {
		return new DistlockContestant(replicas, List.of(), false, false);
	}

	/** This starter on a Redis Cluster ({@code --cluster}), scenario 3 only: its keys spread over the masters. */
	static DistlockContestant onCluster(List<String> seedNodes) {
		return new DistlockContestant(0, List.copyOf(seedNodes), false, false);
	}

	@Override
	public String name() {
		if (!this.clusterNodes.isEmpty()) {
			return "distlock, 3-master cluster";
		}
		if (this.templateOnly) {
			return "distlock, template-only";
		}
		if (this.ownSubscription) {
			return "distlock, own pub/sub connection";
		}
		if (this.noHandOver) {
			return "distlock, no local hand-over";
		}
		return (this.replicaAcks > 0) ? "distlock, replica-acks=" + this.replicaAcks : "distlock";
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public Set<Scenario> scenarios() {
		if (this.noHandOver) {
			return EnumSet.of(Scenario.HOT_KEY);
		}
		// the read-write scenario needs read and write locks (LockRequest.read() and write(), not in this engine yet)
		// and the permits scenario a semaphore: DistlockModeContestant.readWrite() and permits() take those
		return this.clusterNodes.isEmpty() ? EnumSet.complementOf(EnumSet.of(Scenario.READ_WRITE, Scenario.PERMITS))
				: EnumSet.of(Scenario.MANY_KEYS);
	}

	@Override
	public Client open(Target target, Options options) {
		LettuceConnectionFactory factory = this.clusterNodes.isEmpty() ? connectionFactory(target)
				: clusterConnectionFactory(this.clusterNodes);
		RedisLockServiceBuilder builder = RedisLockService.builder(factory)
			.keyPrefix((this.replicaAcks > 0) ? "bench-distlock-acks"
					: this.templateOnly ? "bench-distlock-template" : this.ownSubscription ? "bench-distlock-own"
							: this.noHandOver ? "bench-distlock-no-hand-over" : "bench-distlock");
		if (this.templateOnly || this.ownSubscription) {
			EnginePathsAccess.paths(builder, !this.templateOnly, !this.ownSubscription);
		}
		if (this.noHandOver) {
			builder.localHandOvers(0);
		}
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
			return Client.lockedWith(this.service, key, this.ttl, this.waitTime, criticalSection);
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
