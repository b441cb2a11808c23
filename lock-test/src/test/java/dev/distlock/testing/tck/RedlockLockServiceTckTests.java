package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockService;
import dev.distlock.redis.RedlockLockService;
import dev.distlock.redis.RedlockLockServiceBuilder;
import dev.distlock.test.redis.RedisServer;
import io.lettuce.core.ClientOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The engine contract against the Redlock engine on three independent {@code redis-server} processes (on free
 * loopback ports): each instance is a {@link RedlockLockService} with connection factories of its own, one per node,
 * as an application instance has.
 * <p>
 * Redlock takes exclusive locks only: it refuses {@code FAIR}, {@code READ}, {@code WRITE} and {@code PERMITS}
 * requests with an {@link UnsupportedOperationException}, which the suite's {@link #supports} finds, so the fair,
 * read-write and permits tests are skipped saying so (the refusal of permits, naming the key, is tested). It has no asynchronous acquisition (not an {@code AsyncLockService}): those tests are
 * skipped saying so too; and, as for the single-node engine, the exact count-down of a lease's time, which needs a
 * clock the test controls. Everything else runs: mutual exclusion and fencing tokens, re-entry, waiting, lease times
 * and extensions, the store queries, lost leases and the operator view with the forced release.
 */
class RedlockLockServiceTckTests extends LockServiceTck {

	/**
	 * Per-node timeout: far below the lease times of the suite, with room for a loaded 2-core machine (as the
	 * engine's own Redlock tests use); the engine wants lease times of at least three of them.
	 */
	private static final Duration NODE_TIMEOUT = Duration.ofMillis(500);

	private static final List<RedisServer> servers = new ArrayList<>();

	private final Map<LockService, List<LettuceConnectionFactory>> factories = new ConcurrentHashMap<>();

	@BeforeAll
	static void startNodes() {
		try {
			for (int i = 0; i < 3; i++) {
				servers.add(RedisServer.start());
			}
		}
		catch (RuntimeException ex) {
			stopNodes();
			throw ex;
		}
	}

	@AfterAll
	static void stopNodes() {
		for (RedisServer server : servers) {
			try {
				server.close();
			}
			catch (RuntimeException ex) {
				// keep closing the rest
			}
		}
		servers.clear();
	}

	/**
	 * A lease that also took a node whose grant came after the quorum's (adopted, so that it is renewed there too)
	 * carries the greatest token of its granting nodes, while {@code holder} reads every node: seen once in a build
	 * under load, the late node's token greater than the lease's. A fence compares the token with greater
	 * ones, so the reported token is never less than the lease's; see RedlockLockService's Javadoc.
	 */
	@Override
	protected boolean holderReportsTheLeasesOwnToken() {
		return false;
	}

	@Override
	protected LockService newInstance(Options options) {
		List<LettuceConnectionFactory> nodes = new ArrayList<>();
		for (RedisServer server : servers) {
			nodes.add(factory(server));
		}
		// renewals every fifth of the lease time: a renewed lease of shortTtl() outlives the stalls of a loaded machine
		RedlockLockServiceBuilder builder = RedlockLockService.builder(List.<RedisConnectionFactory>copyOf(nodes))
			.nodeTimeout(NODE_TIMEOUT)
			.renewalRatio(0.2)
			.eventPublisher(options.eventPublisher());
		options.listeners().forEach(builder::listener);
		RedlockLockService service = builder.build();
		this.factories.put(service, nodes);
		return service;
	}

	/**
	 * A node's factory as the auto-configuration makes it: the node timeout as its command timeout, and a command to
	 * a node that is down fails at once rather than waiting in Lettuce's queue for the node to come back. Connected
	 * here, as the engine's own Redlock tests do: a connection's handshake is bounded by the command timeout too, and
	 * the first call of a new JVM on a loaded machine (class loading, Netty's start) can take longer than that, so an
	 * instance's first acquisition would find no node answering (seen in the first run of this class).
	 */
	private static LettuceConnectionFactory factory(RedisServer server) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()),
				LettuceClientConfiguration.builder()
					.commandTimeout(NODE_TIMEOUT)
					.clientOptions(ClientOptions.builder()
						.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
						.build())
					.build());
		factory.afterPropertiesSet();
		factory.start();
		connect(factory);
		return factory;
	}

	/** Open the factory's shared connection, tried again until it succeeds, for at most 30 seconds. */
	private static void connect(LettuceConnectionFactory factory) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		for (;;) {
			try (RedisConnection connection = factory.getConnection()) {
				connection.ping();
				return;
			}
			catch (RuntimeException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw ex;
				}
			}
		}
	}

	@Override
	protected void closeInstance(LockService instance) {
		super.closeInstance(instance);
		List<LettuceConnectionFactory> nodes = this.factories.remove(instance);
		if (nodes != null) {
			nodes.forEach(LettuceConnectionFactory::destroy);
		}
	}

	/** The service closes, but its connections stay: its lease stays on the nodes until its time runs out. */
	@Override
	protected void crash(LockService instance) {
		((RedlockLockService) instance).close();
	}

	@Override
	protected Duration shortTtl() {
		return Duration.ofSeconds(3);
	}

}
