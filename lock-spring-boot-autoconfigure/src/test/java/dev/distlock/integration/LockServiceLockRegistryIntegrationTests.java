package dev.distlock.integration;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.core.LockService;
import dev.distlock.core.LockServiceLock;
import dev.distlock.redis.OneServerFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** {@link LockServiceLockRegistry} on a real {@code redis-server}. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockServiceLockRegistryIntegrationTests extends OneServerFixture {

	@Test
	void obtainCachesOneLockPerKeyUnderThePrefix() {
		LockServiceLockRegistry registry = new LockServiceLockRegistry(this.support.service(), "orders:",
				Duration.ofSeconds(10));
		LockServiceLock lock = registry.obtain("42");
		assertThat(registry.obtain("42")).isSameAs(lock);
		assertThat(lock.key()).isEqualTo("orders:42");
		assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(42));
		assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(" "));
	}

	@Test
	void expiresOnlyUnheldLocks() throws Exception {
		LockServiceLockRegistry registry = new LockServiceLockRegistry(this.support.service(), Duration.ofSeconds(10));
		LockServiceLock held = registry.obtain("held");
		LockServiceLock idle = registry.obtain("idle");
		held.lock();
		try {
			registry.expireUnusedOlderThan(-1);
			assertThat(registry.obtain("held")).isSameAs(held);
			assertThat(registry.obtain("idle")).isNotSameAs(idle);
			// a long age keeps what was used within it
			LockServiceLock recent = registry.obtain("idle");
			registry.expireUnusedOlderThan(60_000);
			assertThat(registry.obtain("idle")).isSameAs(recent);
		}
		finally {
			held.unlock();
		}
	}

	@Test
	void aTtlLongerThanAYearIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockServiceLockRegistry(this.support.service(), Duration.ofDays(366)))
			.withMessage("'ttl' must be at most 365 days, but was PT8784H");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockServiceLock(this.support.service(), "job", Duration.ofDays(366)))
			.withMessage("'ttl' of lock 'job' must be at most 365 days, but was PT8784H");
	}

	@Test
	void renewLockActsOnTheCallingThreadsLease() throws Exception {
		LockServiceLockRegistry registry = new LockServiceLockRegistry(this.support.service(), Duration.ofSeconds(10));
		assertThatIllegalStateException().isThrownBy(() -> registry.renewLock("job"));
		LockServiceLock lock = registry.obtain("job");
		lock.lock();
		try {
			assertThatIllegalArgumentException().isThrownBy(() -> registry.renewLock("job", Duration.ofDays(366)))
				.withMessageContaining("at most 365 days").withMessageContaining("'job'");
			registry.renewLock("job", Duration.ofSeconds(20));
			assertThat(server.execute("PTTL", "lock:{job}")).asString().satisfies(
					(pttl) -> assertThat(Long.parseLong(pttl)).isGreaterThan(10_000));
			registry.renewLock("job");
			CompletableFuture<Throwable> otherThread = CompletableFuture.supplyAsync(() -> {
				try {
					registry.renewLock("job");
					return null;
				}
				catch (Throwable ex) {
					return ex;
				}
			});
			assertThat(otherThread.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class);
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void executeLockedExcludesAnotherInstance() throws Exception {
		LockService first = this.support.service();
		LockService second = this.support.service();
		LockServiceLockRegistry one = new LockServiceLockRegistry(first, Duration.ofSeconds(10));
		LockServiceLockRegistry two = new LockServiceLockRegistry(second, Duration.ofSeconds(10));
		CountDownLatch inside = new CountDownLatch(1);
		CountDownLatch leave = new CountDownLatch(1);
		CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
			try {
				one.executeLocked("report", () -> {
					inside.countDown();
					leave.await(30, TimeUnit.SECONDS);
				});
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
		AtomicBoolean ran = new AtomicBoolean();
		assertThatExceptionOfType(java.util.concurrent.TimeoutException.class)
			.isThrownBy(() -> two.executeLocked("report", Duration.ofMillis(100), () -> ran.set(true)));
		assertThat(ran).isFalse();
		leave.countDown();
		holder.get(10, TimeUnit.SECONDS);
		two.executeLocked("report", Duration.ofSeconds(5), () -> ran.set(true));
		assertThat(ran).isTrue();
	}

	@Test
	void stopWaitsForHeldLocksThenCallsBack() throws Exception {
		LockServiceLockRegistry registry = new LockServiceLockRegistry(this.support.service(), Duration.ofSeconds(10));
		registry.start();
		CountDownLatch stopped = new CountDownLatch(1);
		registry.stop(stopped::countDown);
		assertThat(stopped.await(5, TimeUnit.SECONDS)).isTrue();
		registry.start();
		LockServiceLock lock = registry.obtain("busy");
		lock.lock();
		CountDownLatch stoppedLater = new CountDownLatch(1);
		registry.stop(stoppedLater::countDown);
		assertThat(registry.isRunning()).isFalse();
		assertThat(stoppedLater.getCount()).isEqualTo(1);
		lock.unlock();
		assertThat(stoppedLater.await(10, TimeUnit.SECONDS)).isTrue();
	}

}
