package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.distlock.redis.RedlockLockService;
import dev.distlock.redis.RedlockLockServiceBuilder;
import io.lettuce.core.ClientOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * This starter's Redlock engine ({@code --redlock}): {@link RedlockLockService} over N independent masters, each node
 * client as the auto-configuration creates it from {@code distlock.redlock.nodes} (command timeout = the node timeout
 * when set, else the adaptive one's ceiling,
 * commands rejected while disconnected), default settings. Scenarios 1 and 2 only.
 */
final class RedlockContestant implements Contestant {

	/**
	 * The default of {@code distlock.redlock.node-timeout}: not set, so the engine's node timeout follows the nodes'
	 * reply times (50-500 ms).
	 */
	static final @Nullable Duration NODE_TIMEOUT = null;

	private final List<Target> nodes;

	private final @Nullable Duration nodeTimeout;

	/**
	 * @param nodes the masters
	 * @param nodeTimeout the node timeout: the default for the measured runs; the smoke test, which checks that the
	 * contestant works rather than how fast, gives one no stall of a loaded machine exceeds
	 */
	RedlockContestant(List<Target> nodes, @Nullable Duration nodeTimeout) {
		this.nodes = List.copyOf(nodes);
		this.nodeTimeout = nodeTimeout;
	}

	@Override
	public String name() {
		return "distlock Redlock, " + this.nodes.size() + " nodes";
	}

	@Override
	public boolean onMainServer() {
		return false;
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public Set<Scenario> scenarios() {
		return EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY);
	}

	@Override
	public Client open(Target target, Options options) {
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		for (Target node : this.nodes) {
			factories.add(nodeFactory(node, this.nodeTimeout));
		}
		RedlockLockServiceBuilder builder = RedlockLockService
			.builder(new ArrayList<RedisConnectionFactory>(factories))
			.keyPrefix("bench-redlock" + this.nodes.size());
		if (this.nodeTimeout != null) {
			builder.nodeTimeout(this.nodeTimeout);
		}
		RedlockLockService service = builder.build();
		return new RedlockClient(factories, service, options.ttl(), options.waitTime());
	}

	private static LettuceConnectionFactory nodeFactory(Target node, @Nullable Duration nodeTimeout) {
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.commandTimeout((nodeTimeout != null) ? nodeTimeout
					: Duration.ofMillis(RedlockLockServiceBuilder.ADAPTIVE_CEILING_MILLIS))
			.clientOptions(ClientOptions.builder()
				.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
				.build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(node.host(), node.port()), client);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private record RedlockClient(List<LettuceConnectionFactory> factories, RedlockLockService service, Duration ttl,
			Duration waitTime) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			return Client.lockedWith(this.service, key, this.ttl, this.waitTime, criticalSection);
		}

		@Override
		public long heldOrWaiting() {
			return this.service.activeLeases().size() + this.service.waitingThreads();
		}

		@Override
		public void close() {
			this.service.close();
			this.factories.forEach(LettuceConnectionFactory::destroy);
		}

	}

}
