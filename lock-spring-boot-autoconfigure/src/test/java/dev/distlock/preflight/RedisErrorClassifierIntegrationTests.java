package dev.distlock.preflight;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.preflight.Refusal.Target;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A real redis-server refuses credentials, commands, keys and channels, is unreachable or hangs, and the classifier
 * tells each failure Spring Data Redis throws for it apart, with Redis's own text (the texts the unit tests use).
 * TLS failures are in {@link TlsIntegrationTests}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisErrorClassifierIntegrationTests {

	private static RedisServer redis;

	private final SecuredRedis secured = new SecuredRedis();

	@BeforeAll
	static void start() {
		redis = RedisServer.start();
		// may run scripts and touch lock:* only, with no channel and few of the engine's other commands
		SecuredRedis.createUser(redis, "app", "pw", "~lock:* -@all +eval +evalsha +hset +publish +subscribe");
	}

	@AfterAll
	static void stop() {
		redis.close();
	}

	@AfterEach
	void close() {
		this.secured.close();
	}

	private RedisError failureOf(RedisConnectionFactory factory, Consumer<RedisConnection> action) {
		Throwable failure = catchThrowable(() -> {
			try (RedisConnection connection = factory.getConnection()) {
				action.accept(connection);
			}
		});
		assertThat(failure).as("the call should have failed").isNotNull();
		return RedisErrorClassifier.classify(failure);
	}

	private RedisError failureAsApp(Consumer<RedisConnection> action) {
		return failureOf(this.secured.factory(redis, "app", "pw"), action);
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void aWrongPasswordIsAuthentication() {
		RedisError error = failureOf(this.secured.factory(redis, "app", "wrong"), RedisConnection::ping);
		assertThat(error).isEqualTo(new RedisError(RedisErrorKind.AUTHENTICATION, null,
				"WRONGPASS invalid username-password pair or user is disabled."));
	}

	@Test
	void noPasswordWhereRequirepassWantsOneIsAuthenticationAndTheRightOneWorks() {
		redis.execute("CONFIG", "SET", "requirepass", "s3cret");
		try {
			RedisError error = failureOf(this.secured.factory(redis, null, null), RedisConnection::ping);
			assertThat(error.kind()).isEqualTo(RedisErrorKind.AUTHENTICATION);
			assertThat(error.message()).startsWith("NOAUTH HELLO must be called with the client already authenticated");
			assertThat(failureOf(this.secured.factory(redis, null, "wrong"), RedisConnection::ping).kind())
				.isEqualTo(RedisErrorKind.AUTHENTICATION);
			try (RedisConnection connection = this.secured.factory(redis, null, "s3cret").getConnection()) {
				assertThat(connection.ping()).isEqualTo("PONG");
			}
		}
		finally {
			SecuredRedis.clearRequirePass(redis, "s3cret");
		}
	}

	@Test
	void aRefusedCommandIsPermissionNamingIt() {
		RedisError error = failureAsApp(RedisConnection::ping);
		assertThat(error).isEqualTo(new RedisError(RedisErrorKind.PERMISSION, new Refusal(Target.COMMAND, "ping"),
				"NOPERM this user has no permissions to run the 'ping' command"));
	}

	@Test
	void aRefusedKeyIsPermission() {
		RedisError error = failureAsApp(connection -> connection.scriptingCommands()
			.eval(bytes("return 1"), ReturnType.INTEGER, 1, bytes("other:{k}")));
		assertThat(error).isEqualTo(new RedisError(RedisErrorKind.PERMISSION, new Refusal(Target.KEY, null),
				"NOPERM this user has no permissions to access one of the keys used as arguments"));
	}

	@Test
	void aRefusedChannelIsPermission() {
		RedisError error = failureAsApp(connection -> connection.subscribe((message, pattern) -> {
		}, bytes("lock:{k}:released")));
		assertThat(error).isEqualTo(new RedisError(RedisErrorKind.PERMISSION, new Refusal(Target.CHANNEL, null),
				"NOPERM this user has no permissions to access one of the channels used as arguments"));
	}

	@Test
	void aCommandRefusedInsideAScriptIsPermission() {
		RedisError error = failureAsApp(connection -> connection.scriptingCommands()
			.eval(bytes("return redis.call('hincrby', KEYS[1], 'f', 1)"), ReturnType.INTEGER, 1, bytes("lock:{k}")));
		assertThat(error.kind()).isEqualTo(RedisErrorKind.PERMISSION);
		assertThat(error.refusal()).isEqualTo(new Refusal(Target.COMMAND, null));
		assertThat(error.message())
			.startsWith("ERR The user executing the script can't run this command or subcommand script: ");
	}

	@Test
	void aKeyOrChannelRefusedInsideAScriptIsPermission() {
		RedisError key = failureAsApp(connection -> connection.scriptingCommands()
			.eval(bytes("return redis.call('hset', 'other:{k}', 'f', 1)"), ReturnType.INTEGER, 1, bytes("lock:{k}")));
		assertThat(key.refusal()).isEqualTo(new Refusal(Target.KEY, null));
		assertThat(key.message()).startsWith("ERR The user executing the script can't access at least one of the keys "
				+ "mentioned in the command arguments");
		// what redis.pcall hands a script: the text alone
		String publish;
		try (RedisConnection connection = this.secured.factory(redis, "app", "pw").getConnection()) {
			publish = new String((byte[]) connection.scriptingCommands()
				.eval(bytes("return redis.pcall('publish', 'lock:{k}:released', 'x').err"), ReturnType.VALUE, 1,
						bytes("lock:{k}")), StandardCharsets.UTF_8);
		}
		assertThat(publish).isEqualTo("ERR The user executing the script can't publish to the channel mentioned in the command");
		assertThat(RedisErrorClassifier.classify(publish))
			.isEqualTo(new RedisError(RedisErrorKind.PERMISSION, new Refusal(Target.CHANNEL, null), publish));
	}

	@Test
	void noScriptIsOther() {
		RedisError error = failureAsApp(connection -> connection.scriptingCommands()
			.evalSha("0000000000000000000000000000000000000000", ReturnType.INTEGER, 0));
		assertThat(error).isEqualTo(
				new RedisError(RedisErrorKind.OTHER, null, "NOSCRIPT No matching script. Please use EVAL."));
	}

	@Test
	void aRefusedConnectionIsUnavailable() {
		RedisError error = failureOf(this.secured.factory(RedisServer.HOST, TlsFiles.freePort(), null, null),
				RedisConnection::ping);
		assertThat(error).isEqualTo(new RedisError(RedisErrorKind.UNAVAILABLE, null, "Connection refused"));
	}

	@Test
	void aHungServerIsUnavailable() {
		RedisConnectionFactory factory = this.secured.factory(redis, null, null);
		redis.pause();
		try {
			RedisError error = failureOf(factory, RedisConnection::ping);
			assertThat(error.kind()).isEqualTo(RedisErrorKind.UNAVAILABLE);
			assertThat(error.message()).contains("timed out after 2 second(s)");
		}
		finally {
			redis.resume();
		}
	}

}
