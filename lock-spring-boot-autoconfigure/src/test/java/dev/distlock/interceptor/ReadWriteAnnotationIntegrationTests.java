package dev.distlock.interceptor;

import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import dev.distlock.redis.LockTestSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @DistributedLock(mode = READ | WRITE)} through the interceptor on the Redis engine: the method sees its lease
 * in {@link LockContext}, a writer's nested read is a downgrade, and a reader's nested write fails at once.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadWriteAnnotationIntegrationTests {

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
		redis.execute("FLUSHALL");
	}

	@Test
	void readAndWriteMethodsSeeTheirLeasesAndAReaderCannotUpgrade() {
		DistributedLockInterceptorIntegrationTests.runner(redis).withUserConfiguration(Beans.class).run(context -> {
			assertThat(context).hasNotFailed();
			Catalog catalog = context.getBean(Catalog.class);
			Reader reader = context.getBean(Reader.class);
			Writer writer = context.getBean(Writer.class);
			Lease read = catalog.read("c1");
			assertThat(read.key()).isEqualTo("catalog:c1");
			Lease[] written = writer.writeThenRead("c1");
			assertThat(written[1].fencingToken()).isEqualTo(written[0].fencingToken());
			assertThat(written[0].fencingToken()).isGreaterThan(read.fencingToken());
			assertThatIllegalStateException().isThrownBy(() -> reader.readThenWrite("c1"))
				.withMessageContaining("holds the read lock of 'catalog:c1' and asked for its write lock");
			assertThat(LockTestSupport.leftKeys(redis)).isEmpty();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Catalog catalog() {
			return new Catalog();
		}

		@Bean
		Reader reader(Catalog catalog) {
			return new Reader(catalog);
		}

		@Bean
		Writer writer(Catalog catalog) {
			return new Writer(catalog);
		}

	}

	static class Catalog {

		@DistributedLock(key = "'catalog:' + #id", mode = LockMode.READ)
		public Lease read(String id) {
			assertThat(redis.execute("HGET", "lock:{catalog:" + id + "}", "~m")).isNotNull();
			return LockContext.current().orElseThrow();
		}

		@DistributedLock(key = "'catalog:' + #id", mode = LockMode.WRITE)
		public Lease write(String id) {
			assertThat(redis.execute("HGET", "lock:{catalog:" + id + "}", "~m")).isEqualTo("w");
			return LockContext.current().orElseThrow();
		}

	}

	static class Reader {

		private final Catalog catalog;

		Reader(Catalog catalog) {
			this.catalog = catalog;
		}

		@DistributedLock(key = "'catalog:' + #id", mode = LockMode.READ)
		public Lease readThenWrite(String id) {
			return this.catalog.write(id);
		}

	}

	static class Writer {

		private final Catalog catalog;

		Writer(Catalog catalog) {
			this.catalog = catalog;
		}

		@DistributedLock(key = "'catalog:' + #id", mode = LockMode.WRITE)
		public Lease[] writeThenRead(String id) {
			Lease write = LockContext.current().orElseThrow();
			return new Lease[] { write, this.catalog.read(id) };
		}

	}

}
