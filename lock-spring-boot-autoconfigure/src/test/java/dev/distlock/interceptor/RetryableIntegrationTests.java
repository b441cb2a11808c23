package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.TransientLockException;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Spring Framework's {@code @Retryable} with {@code includes = TransientLockException.class} retries a call whose lock
 * was held elsewhere, and only that: the lock failures that are not transient go straight to the caller.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RetryableIntegrationTests {

	private RedisServer redis;

	@BeforeEach
	void flush(RedisServer redis) {
		this.redis = redis;
		redis.execute("FLUSHALL");
	}

	private ApplicationContextRunner runner() {
		return DistributedLockInterceptorIntegrationTests.runner(this.redis).withUserConfiguration(Beans.class);
	}

	@Test
	void aRetryableCallerRetriesWhileTheKeyIsHeldElsewhereAndSucceedsOnceItIsReleased() {
		runner().run(context -> {
			LockService locks = context.getBean(LockService.class);
			Shop shop = context.getBean(Shop.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("stock:sku-1", Duration.ofSeconds(30), Duration.ZERO))
				.get(10, TimeUnit.SECONDS);

			// a thread of its own: a pool thread could be the one that holds the lease, and would re-enter it
			CompletableFuture<Long> purchase = CompletableFuture.supplyAsync(() -> shop.buyPatiently("sku-1"),
					(task) -> new Thread(task, "buyer").start());
			await().atMost(Duration.ofSeconds(10)).until(() -> shop.attempts() >= 3);
			assertThat(purchase).isNotDone();
			held.release();

			assertThat(purchase.get(10, TimeUnit.SECONDS)).as("the fencing token of the lease the last attempt held")
				.isPositive();
			assertThat(context.getBean(Stock.class).taken()).isEqualTo(1);
		});
	}

	@Test
	void retriesThatRunOutEndWithTheTimeoutOfTheLastAttempt() {
		runner().run(context -> {
			LockService locks = context.getBean(LockService.class);
			Shop shop = context.getBean(Shop.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("stock:sku-2", Duration.ofSeconds(30), Duration.ZERO))
				.get(10, TimeUnit.SECONDS);
			try {
				assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> shop.buy("sku-2"))
					.withMessageContaining("stock:sku-2");
				assertThat(shop.attempts()).isEqualTo(1 + Shop.MAX_RETRIES);
			}
			finally {
				held.release();
			}
		});
	}

	@Test
	void aLockFailureThatIsNotTransientIsNotRetried() {
		runner().run(context -> {
			Shop shop = context.getBean(Shop.class);
			assertThatExceptionOfType(InvalidLockKeyException.class).isThrownBy(() -> shop.buy(null));
			assertThat(shop.attempts()).isEqualTo(1);
		});
	}

	@Test
	void onTheLockedMethodItselfTheRetryRunsInsideTheLockAndCannotSeeAFailedAcquisition() {
		runner().run(context -> {
			LockService locks = context.getBean(LockService.class);
			Stock stock = context.getBean(Stock.class);
			Attempts attempts = context.getBean(Attempts.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("stock:sku-3", Duration.ofSeconds(30), Duration.ZERO))
				.get(10, TimeUnit.SECONDS);
			try {
				assertThatExceptionOfType(LockAcquisitionTimeoutException.class)
					.isThrownBy(() -> stock.takeRetryingInside("sku-3"));
				assertThat(attempts.failed("sku-3")).as("one acquisition, not retried").isEqualTo(1);
				assertThat(stock.tokens()).as("the method never ran").isEmpty();
			}
			finally {
				held.release();
			}
			// with the key free, the retries of the method's own failures all run under the one lease
			assertThat(stock.takeRetryingInside("sku-3")).isEqualTo(3);
			assertThat(stock.tokens()).hasSize(3).containsOnly(stock.tokens().get(0));
		});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableResilientMethods
	static class Beans {

		@Bean
		Stock stock() {
			return new Stock();
		}

		@Bean
		Shop shop(Stock stock) {
			return new Shop(stock);
		}

		@Bean
		Attempts attempts() {
			return new Attempts();
		}

	}

	/** The locked resource: tries the lock once per call. */
	public static class Stock {

		private final AtomicInteger taken = new AtomicInteger();

		private final List<Long> tokens = new CopyOnWriteArrayList<>();

		// a null sku makes a null key, so that a call can fail in a way no retry can mend
		@DistributedLock(key = "#sku == null ? null : 'stock:' + #sku", waitTime = "0")
		public long take(String sku) {
			this.taken.incrementAndGet();
			return LockContext.current().map(Lease::fencingToken).orElseThrow();
		}

		/** Fails twice, then returns the number of its attempts; records the fencing token each attempt held. */
		@Retryable(includes = { IllegalStateException.class, TransientLockException.class }, maxRetries = 2, delay = 10)
		@DistributedLock(key = "'stock:' + #sku", waitTime = "0")
		public int takeRetryingInside(String sku) {
			this.tokens.add(LockContext.current().map(Lease::fencingToken).orElseThrow());
			if (this.tokens.size() < 3) {
				throw new IllegalStateException("attempt " + this.tokens.size() + " failed");
			}
			return this.tokens.size();
		}

		public int taken() {
			return this.taken.get();
		}

		public List<Long> tokens() {
			return List.copyOf(this.tokens);
		}

	}

	/** The caller: retries lock failures that a later attempt may not meet. */
	public static class Shop {

		static final int MAX_RETRIES = 4;

		private final Stock stock;

		private final AtomicInteger attempts = new AtomicInteger();

		Shop(Stock stock) {
			this.stock = stock;
		}

		@Retryable(includes = TransientLockException.class, maxRetries = MAX_RETRIES, delay = 100)
		public long buy(String sku) {
			this.attempts.incrementAndGet();
			return this.stock.take(sku);
		}

		@Retryable(includes = TransientLockException.class, maxRetries = 100, delay = 100)
		public long buyPatiently(String sku) {
			this.attempts.incrementAndGet();
			return this.stock.take(sku);
		}

		public int attempts() {
			return this.attempts.get();
		}

	}

	/** Counts the acquisitions that ended without a lease, per key. */
	static class Attempts implements LockListener {

		private final Map<String, AtomicInteger> failed = new ConcurrentHashMap<>();

		@Override
		public void notAcquired(LockRequest request, Duration waited, @Nullable RuntimeException failure) {
			this.failed.computeIfAbsent(request.key(), (key) -> new AtomicInteger()).incrementAndGet();
		}

		int failed(String sku) {
			AtomicInteger count = this.failed.get("stock:" + sku);
			return (count != null) ? count.get() : 0;
		}

	}

}
