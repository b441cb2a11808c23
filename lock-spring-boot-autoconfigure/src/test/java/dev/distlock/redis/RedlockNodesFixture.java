package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.test.redis.RedisServer;
import io.lettuce.core.ClientOptions;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Five independent redis-server processes for the Redlock tests, and Redlock services on them, each service with its
 * own connection factories (its own clients, as a separate application instance would have). Closes all it opened.
 */
final class RedlockNodesFixture implements AutoCloseable {

	/**
	 * Per-node timeout of the tests: below their lease times, with room for a loaded 2-core machine (at 250 ms a
	 * release once reached only 1 of 5 nodes in time while three builds shared the machine; the engine wants
	 * lease times of at least three node timeouts).
	 */
	static final Duration NODE_TIMEOUT = Duration.ofMillis(500);

	final List<RedisServer> servers = new ArrayList<>();

	private final List<AutoCloseable> opened = new ArrayList<>();

	RedlockNodesFixture(int count) {
		try {
			for (int i = 0; i < count; i++) {
				this.servers.add(RedisServer.start());
			}
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/** One Lettuce factory per node, with the per-node timeout as its command timeout. */
	synchronized List<RedisConnectionFactory> factories() {
		List<RedisConnectionFactory> factories = new ArrayList<>();
		for (RedisServer server : this.servers) {
			factories.add(factory(server.host(), server.port(), NODE_TIMEOUT));
		}
		return factories;
	}

	/** A connected Lettuce factory to one address (a node, or a proxy in front of one). */
	synchronized LettuceConnectionFactory factory(String host, int port, Duration commandTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder()
					.commandTimeout(commandTimeout)
					// as the auto-configuration does: a command to a node that is down fails now rather than waiting
					// in Lettuce's queue to run when the node is back, long after the caller gave up
					.clientOptions(ClientOptions.builder()
						.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
						.build())
					.build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		connect(factory);
		return factory;
	}

	/**
	 * Open the factory's shared connection now, not in the first lock call within its node timeout: a connection's
	 * handshake is bounded by the command timeout too, and a loaded machine that starts several JVMs at once can take
	 * longer than that; tried again until it succeeds, for at most 30 seconds.
	 */
	static void connect(LettuceConnectionFactory factory) {
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

	RedlockLockServiceBuilder builder() {
		return RedlockLockService.builder(factories()).nodeTimeout(NODE_TIMEOUT);
	}

	synchronized RedlockLockService service(RedlockLockServiceBuilder builder) {
		RedlockLockService service = builder.build();
		this.opened.add(0, service);
		return service;
	}

	RedlockLockService service() {
		return service(builder());
	}

	@Override
	public synchronized void close() {
		for (AutoCloseable closeable : this.opened) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// keep closing the rest
			}
		}
		this.opened.clear();
		for (RedisServer server : this.servers) {
			try {
				server.close();
			}
			catch (RuntimeException ex) {
				// keep closing the rest
			}
		}
	}

}
