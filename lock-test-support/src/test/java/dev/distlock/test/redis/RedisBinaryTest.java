package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RedisBinaryTest {

	@AfterEach
	void clearProperties() {
		System.clearProperty(RedisBinary.FORCE_PROPERTY);
		System.clearProperty(RedisBinary.PATH_PROPERTY);
	}

	@Test
	void embeddedBinaryIsExtractedOnceAndRuns62() {
		RedisBinary embedded = RedisBinary.embedded();
		assertThat(RedisBinary.embedded()).isSameAs(embedded);
		assertThat(embedded.source()).isEqualTo(RedisBinary.Source.EMBEDDED);
		assertThat(embedded.path()).isExecutable();
		assertThat(embedded.version()).startsWith("6.2.");
		assertThat(embedded.majorVersion()).isEqualTo(6);

		try (RedisServer redis = RedisServer.start(embedded)) {
			assertThat(redis.version()).startsWith("6.2.");
			assertThat((String) redis.execute("INFO", "server")).contains("redis_version:6.2.");
			assertThat(redis.execute("DEBUG", "SLEEP", "0")).isEqualTo("OK");
			redis.execute("SET", "k", "v");
			redis.restart();
			assertThat(redis.execute("DBSIZE")).isEqualTo(0L);
		}
	}

	@Test
	void forcePropertySelectsTheEmbeddedBinary() {
		System.setProperty(RedisBinary.FORCE_PROPERTY, "embedded");
		System.setProperty(RedisBinary.PATH_PROPERTY, "/nonexistent/redis-server");
		assertThat(RedisBinary.detect()).isEqualTo(RedisBinary.embedded());

		System.setProperty(RedisBinary.FORCE_PROPERTY, "docker");
		assertThatThrownBy(RedisBinary::detect).isInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void explicitPathWinsOverPath() {
		Path embeddedPath = RedisBinary.embedded().path();
		System.setProperty(RedisBinary.PATH_PROPERTY, embeddedPath.toString());
		RedisBinary binary = RedisBinary.detect();
		assertThat(binary.source()).isEqualTo(RedisBinary.Source.EXPLICIT);
		assertThat(binary.path()).isEqualTo(embeddedPath);
	}

	@Test
	void nonExecutableExplicitPathIsRejected() {
		System.setProperty(RedisBinary.PATH_PROPERTY, "/nonexistent/redis-server");
		assertThatThrownBy(RedisBinary::detect)
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("/nonexistent/redis-server");
	}

	@Test
	void redisServerOnPathIsPreferredOverEmbedded() {
		assumeTrue(System.getenv(RedisBinary.PATH_ENV) == null && System.getenv(RedisBinary.FORCE_ENV) == null,
				"explicit binary configured through the environment");
		assumeTrue(RedisBinary.onPath().isPresent(), "no redis-server on PATH");
		RedisBinary binary = RedisBinary.detect();
		assertThat(binary.source()).isEqualTo(RedisBinary.Source.PATH);
		assertThat(binary.version()).matches("\\d+\\.\\d+\\.\\d+");
		try (RedisServer redis = RedisServer.start()) {
			assertThat(redis.binary()).isEqualTo(binary);
			assertThat((String) redis.execute("INFO", "server")).contains("redis_version:" + binary.version());
		}
	}
}
