package dev.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import dev.distlock.redis.OneServerFixture;
import dev.distlock.redis.LockTestSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** {@link LockServiceLock} against a real {@code redis-server}: each service is one simulated application instance. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockServiceLockIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(10);

	private StringRedisTemplate redis;

	@BeforeEach
	void template() {
		this.redis = this.support.template();
	}

	@Test
	void twoInstancesTimesTwoThreadsLoseNoUpdate() throws Exception {
		List<LockService> services = List.of(this.support.service(), this.support.service());
		int threadsPerService = 2;
		int rounds = 150;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(services.size() * threadsPerService);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (LockService service : services) {
				Lock lock = new LockServiceLock(service, "counter", TTL);
				for (int t = 0; t < threadsPerService; t++) {
					futures.add(pool.submit(() -> {
						start.await();
						for (int i = 0; i < rounds; i++) {
							lock.lock();
							try {
								if (inside.incrementAndGet() != 1) {
									overlaps.incrementAndGet();
								}
								String value = this.redis.opsForValue().get("counter:value");
								int next = ((value != null) ? Integer.parseInt(value) : 0) + 1;
								this.redis.opsForValue().set("counter:value", Integer.toString(next));
								inside.decrementAndGet();
							}
							finally {
								lock.unlock();
							}
						}
						return null;
					}));
				}
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(100, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(overlaps).hasValue(0);
		assertThat(this.redis.opsForValue().get("counter:value"))
			.isEqualTo(Integer.toString(services.size() * threadsPerService * rounds));
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
	}

	@Test
	void reentersPerThreadAndUnlocksTheInnermostHold() throws Exception {
		LockServiceLock lock = new LockServiceLock(this.support.service(), "reentrant", TTL);
		Lock other = new LockServiceLock(this.support.service(), "reentrant", TTL);
		lock.lock();
		assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
		assertThat(lock.getHoldCount()).isEqualTo(2);
		long token = lock.currentLease().orElseThrow().fencingToken();
		assertThat(lock.currentLease().orElseThrow().fencingToken()).isEqualTo(token);
		assertThat(lock.idleTime()).isZero();
		lock.unlock();
		assertThat(lock.isHeldByCurrentThread()).isTrue();
		assertThat(tryLockOnAnotherThread(other)).isFalse();
		lock.unlock();
		assertThat(lock.isHeldByCurrentThread()).isFalse();
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
		assertThat(tryLockOnAnotherThread(other)).isTrue();
	}

	@Test
	void unlockWithoutHoldingThrowsIllegalMonitorState() throws Exception {
		LockServiceLock lock = new LockServiceLock(this.support.service(), "not-held", TTL);
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
			.withMessageContaining("does not hold lock 'not-held'");
		lock.lock();
		try {
			// another thread of the same process does not hold it either
			CompletableFuture<Throwable> fromOtherThread = CompletableFuture.supplyAsync(() -> {
				try {
					lock.unlock();
					return null;
				}
				catch (Throwable ex) {
					return ex;
				}
			});
			assertThat(fromOtherThread.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class);
		}
		finally {
			lock.unlock();
		}
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
	}

	@Test
	void interruptingAnInterruptibleWaitEndsIt() throws Exception {
		Lock holder = new LockServiceLock(this.support.service(), "interrupted", TTL);
		Lock waiter = new LockServiceLock(this.support.service(), "interrupted", TTL);
		holder.lock();
		try {
			AtomicReference<Throwable> outcome = new AtomicReference<>();
			AtomicBoolean interruptStatusAfter = new AtomicBoolean(true);
			CountDownLatch done = new CountDownLatch(1);
			Thread thread = new Thread(() -> {
				try {
					waiter.lockInterruptibly();
					waiter.unlock();
				}
				catch (Throwable ex) {
					outcome.set(ex);
				}
				interruptStatusAfter.set(Thread.currentThread().isInterrupted());
				done.countDown();
			});
			thread.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.TIMED_WAITING
					|| thread.getState() == Thread.State.WAITING);
			thread.interrupt();
			assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(outcome.get()).isInstanceOf(InterruptedException.class)
				.hasMessageContaining("interrupted");
			assertThat(interruptStatusAfter).isFalse();
			// interrupted before waiting: at once, without asking the store
			Thread.currentThread().interrupt();
			assertThatExceptionOfType(InterruptedException.class).isThrownBy(() -> waiter.tryLock(5, TimeUnit.SECONDS));
			assertThat(Thread.currentThread().isInterrupted()).isFalse();
		}
		finally {
			holder.unlock();
		}
	}

	@Test
	void lockIsNotEndedByAnInterruptButKeepsTheStatus() throws Exception {
		Lock holder = new LockServiceLock(this.support.service(), "uninterruptible", TTL);
		Lock waiter = new LockServiceLock(this.support.service(), "uninterruptible", TTL);
		holder.lock();
		AtomicBoolean interruptStatusAfter = new AtomicBoolean();
		CountDownLatch acquired = new CountDownLatch(1);
		Thread thread = new Thread(() -> {
			waiter.lock();
			interruptStatusAfter.set(Thread.currentThread().isInterrupted());
			acquired.countDown();
			waiter.unlock();
		});
		try {
			thread.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.TIMED_WAITING
					|| thread.getState() == Thread.State.WAITING);
			thread.interrupt();
			// still waiting once the interrupt was dealt with
			await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.TIMED_WAITING
					|| thread.getState() == Thread.State.WAITING);
			assertThat(acquired.getCount()).isEqualTo(1);
		}
		finally {
			holder.unlock();
		}
		assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(interruptStatusAfter).isTrue();
		thread.join(10_000);
	}

	@Test
	void tryLockGivesUpAtItsDeadline() throws Exception {
		Lock holder = new LockServiceLock(this.support.service(), "busy", TTL);
		LockServiceLock waiter = new LockServiceLock(this.support.service(), "busy", TTL);
		holder.lock();
		try {
			assertThat(tryLockOnAnotherThread(waiter)).isFalse();
			CompletableFuture<Boolean> timed = CompletableFuture.supplyAsync(() -> {
				try {
					return waiter.tryLock(200, TimeUnit.MILLISECONDS);
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			});
			assertThat(timed.get(10, TimeUnit.SECONDS)).isFalse();
			assertThat(waiter.idleTime()).isPositive();
		}
		finally {
			holder.unlock();
		}
	}

	@Test
	void hasNoConditions() {
		Lock lock = new LockServiceLock(this.support.service(), "conditions", TTL);
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition)
			.withMessageContaining("'conditions'");
	}

	@Test
	void badArgumentsFailAtConstruction() {
		LockService service = this.support.service();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new LockServiceLock(service, " ", TTL));
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new LockServiceLock(service, "k", Duration.ZERO))
			.withMessageContaining("'k'");
	}

	/** Whether a one-shot {@code tryLock()} succeeds on a fresh thread (which releases what it got at once). */
	private static boolean tryLockOnAnotherThread(Lock lock) throws Exception {
		return CompletableFuture.supplyAsync(() -> {
			boolean locked = lock.tryLock();
			if (locked) {
				lock.unlock();
			}
			return locked;
		}).get(10, TimeUnit.SECONDS);
	}

}
