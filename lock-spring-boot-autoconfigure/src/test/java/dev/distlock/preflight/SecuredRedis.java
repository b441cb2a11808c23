package dev.distlock.preflight;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.test.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * ACL users and password-protected connections on a {@link RedisServer}, and the connection factories opened on them,
 * all closed together.
 */
final class SecuredRedis implements AutoCloseable {

	/** Short enough that a test of an unreachable server ends quickly, long enough for a loaded 2-core machine. */
	static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	/** (Re)create {@code user} with only {@code password} and the given ACL rules. */
	static void createUser(RedisServer redis, String user, String password, String acl) {
		List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", user, "reset", "on", ">" + password));
		command.addAll(List.of(acl.trim().split("\\s+")));
		redis.execute(command.toArray(new String[0]));
	}

	/**
	 * Clear {@code requirepass} (set to {@code password}): the harness's own connections carry no password, so a test
	 * that sets one must clear it before the harness can stop the server without waiting.
	 */
	static void clearRequirePass(RedisServer redis, String password) {
		RedisClient client = RedisClient.create(RedisURI.builder()
			.withHost(redis.host())
			.withPort(redis.port())
			.withPassword(password.toCharArray())
			.withTimeout(COMMAND_TIMEOUT)
			.build());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().configSet("requirepass", "");
		}
		finally {
			client.shutdown(Duration.ZERO, COMMAND_TIMEOUT);
		}
	}

	/** A started factory on {@code host:port} as {@code user} (null: the default user) with {@code password}. */
	LettuceConnectionFactory factory(String host, int port, @Nullable String user, @Nullable String password) {
		RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(host, port);
		server.setUsername(user);
		if (password != null) {
			server.setPassword(password);
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(server,
				LettuceClientConfiguration.builder().commandTimeout(COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		synchronized (this.factories) {
			this.factories.add(factory);
		}
		return factory;
	}

	LettuceConnectionFactory factory(RedisServer redis, @Nullable String user, @Nullable String password) {
		return factory(redis.host(), redis.port(), user, password);
	}

	@Override
	public void close() {
		synchronized (this.factories) {
			for (LettuceConnectionFactory factory : this.factories) {
				try {
					factory.destroy();
				}
				catch (RuntimeException ex) {
					// keep closing the rest
				}
			}
			this.factories.clear();
		}
	}

}
