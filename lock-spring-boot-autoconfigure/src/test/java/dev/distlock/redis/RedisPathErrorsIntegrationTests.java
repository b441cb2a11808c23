package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.dao.DataAccessException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A failing lease script reaches the caller as a {@link LockUnavailableException} caused by Spring's
 * {@link DataAccessException} on every Redis path, never as a client's raw exception (no {@code io.lettuce} class or
 * {@code ExecutionException} in what the caller sees).
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisPathErrorsIntegrationTests {

	static Stream<Arguments> paths() {
		return Stream.of(
				Arguments.of(Named.<Function<RedisServer, LockTestSupport>>of("Lettuce, default path",
						LockTestSupport::forServer)),
				Arguments.of(Named.<Function<RedisServer, LockTestSupport>>of("Lettuce, template-only",
						server -> LockTestSupport.forServer(server).paths(new EnginePaths(false, true)))),
				Arguments.of(Named.<Function<RedisServer, LockTestSupport>>of("Jedis", LockTestSupport::jedis)));
	}

	@ParameterizedTest
	@MethodSource("paths")
	void aScriptErrorIsTranslatedBySpring(Function<RedisServer, LockTestSupport> supports, RedisServer server) {
		try (LockTestSupport support = supports.apply(server)) {
			RedisLockService service = support.service();
			// a plain string where the lease hash would be: every lease script fails with WRONGTYPE
			support.template().opsForValue().set(service.redisKey("wrong-type"), "not a lease");
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("wrong-type", Duration.ofSeconds(10), Duration.ZERO))
				.satisfies((ex) -> {
					assertThat(ex.getCause()).isInstanceOf(DataAccessException.class);
					assertThat(ex.getMessage()).contains("wrong-type").doesNotContain("io.lettuce")
						.doesNotContain("ExecutionException");
					assertThat(ex.getCause().toString()).doesNotContain("io.lettuce").doesNotContain("ExecutionException");
				});
		}
	}

}
