package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.test.redis.RedisServer;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Opens connection factories and lock services against one Redis address, each factory its own client as a separate
 * application instance would have, and closes everything it opened.
 */
public final class LockTestSupport implements AutoCloseable {

	/** Short enough that a test of an unreachable server ends quickly, long enough for a loaded 2-core machine. */
	public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	private final String host;

	private final int port;

	private final List<AutoCloseable> opened = new ArrayList<>();

	public LockTestSupport(String host, int port) {
		this.host = host;
		this.port = port;
	}

	public static LockTestSupport forServer(RedisServer server) {
		return new LockTestSupport(server.host(), server.port());
	}

	public LettuceConnectionFactory connectionFactory() {
		return connectionFactory(COMMAND_TIMEOUT);
	}

	/** A factory with its own command timeout: short ones make the client give up on calls a fault holds back. */
	public synchronized LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(this.host, this.port),
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	/** A service on its own connection factory: one simulated application instance. */
	public RedisLockService service() {
		return service(RedisLockService.builder(connectionFactory()));
	}

	public synchronized RedisLockService service(RedisLockService.Builder builder) {
		RedisLockService service = builder.build();
		this.opened.add(0, service);
		return service;
	}

	public StringRedisTemplate template() {
		return template(connectionFactory());
	}

	public static StringRedisTemplate template(RedisConnectionFactory factory) {
		StringRedisTemplate template = new StringRedisTemplate(factory);
		template.afterPropertiesSet();
		return template;
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
	}

}
