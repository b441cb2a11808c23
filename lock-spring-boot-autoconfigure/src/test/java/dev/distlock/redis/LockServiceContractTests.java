package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.redis.internal.script.LockScripts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * The lock contract, against whatever real Redis a subclass points at (a local process, the embedded binary, a
 * container). Every test uses its own keys and its own services, each on its own connection factory.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class LockServiceContractTests {

	private static final Duration LONG_TTL = Duration.ofSeconds(30);

	protected LockTestSupport support;

	protected StringRedisTemplate redis;

	/** Where the Redis under test listens. */
	protected abstract LockTestSupport createSupport();

	@BeforeEach
	void openSupport() {
		this.support = createSupport();
		this.redis = this.support.template();
		this.redis.execute((org.springframework.data.redis.core.RedisCallback<Object>) connection -> {
			connection.serverCommands().flushAll();
			return null;
		});
	}

	@AfterEach
	void closeSupport() {
		this.support.close();
	}

	// 1. mutual exclusion

	@Test
	void instancesExcludeEachOtherOnReadModifyWrite() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service(), this.support.service());
		int sections = incrementConcurrently(services, 4, 500, true);
		assertThat(this.redis.opsForValue().get("counter")).isEqualTo(Integer.toString(sections));
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
	}

	@Test
	void withoutTheLockTheSameIncrementsLoseUpdates() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service(), this.support.service());
		int sections = incrementConcurrently(services, 4, 500, false);
		assertThat(Integer.parseInt(this.redis.opsForValue().get("counter"))).isLessThan(sections);
	}

	@Test
	void instancesNeverHaveMorePermitHoldersThanPermits() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service(), this.support.service());
		AtomicInteger most = new AtomicInteger();
		java.util.Set<Long> tokens = java.util.concurrent.ConcurrentHashMap.newKeySet();
		List<Future<?>> workers = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(12);
		try {
			for (int t = 0; t < 12; t++) {
				RedisLockService service = services.get(t % 3);
				StringRedisTemplate template = LockTestSupport.template(this.support.connectionFactory());
				workers.add(pool.submit(() -> {
					for (int i = 0; i < 20; i++) {
						try (Lease lease = service.tryAcquire(LockRequest.of("permits", Duration.ofSeconds(30),
								Duration.ofSeconds(60)).permits(3)).orElseThrow()) {
							// counted in Redis by the critical section itself: every instance sees the one count
							long inside = template.opsForValue().increment("inside");
							most.accumulateAndGet((int) inside, Math::max);
							tokens.add(lease.fencingToken());
							template.opsForValue().decrement("inside");
						}
					}
					return null;
				}));
			}
			for (Future<?> worker : workers) {
				worker.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(most.get()).isBetween(1, 3);
		assertThat(tokens).as("every permit its own token").hasSize(12 * 20);
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
	}

	/** {@code instances × threads × sections} GET-then-SET increments of one counter; returns how many were made. */
	private int incrementConcurrently(List<RedisLockService> services, int threads, int sectionsPerThread, boolean locked)
			throws Exception {
		this.redis.opsForValue().set("counter", "0");
		List<Callable> tasks = new ArrayList<>();
		for (RedisLockService service : services) {
			StringRedisTemplate template = LockTestSupport.template(this.support.connectionFactory());
			for (int t = 0; t < threads; t++) {
				tasks.add(() -> {
					for (int i = 0; i < sectionsPerThread; i++) {
						Runnable increment = () -> {
							String value = template.opsForValue().get("counter");
							template.opsForValue().set("counter", Integer.toString(Integer.parseInt(value) + 1));
						};
						if (locked) {
							service.run("counter", Duration.ofSeconds(10), Duration.ofSeconds(30), increment);
						}
						else {
							increment.run();
						}
					}
					return null;
				});
			}
		}
		runAll(tasks);
		return services.size() * threads * sectionsPerThread;
	}

	interface Callable extends java.util.concurrent.Callable<Object> {
	}

	private static void runAll(List<Callable> tasks) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Object>> futures = new ArrayList<>();
			for (Callable task : tasks) {
				futures.add(pool.submit(() -> {
					start.await();
					return task.call();
				}));
			}
			start.countDown();
			for (Future<Object> future : futures) {
				future.get(90, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void asyncAcquisitionsAreWokenByAnotherInstancesReleaseAndExcludeEachOther() throws Exception {
		RedisLockService first = this.support.service();
		RedisLockService second = this.support.service();
		Lease held = first.acquire("async", LONG_TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = second
			.tryAcquireAsync(LockRequest.of("async", LONG_TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
		await().atMost(Duration.ofSeconds(20)).until(() -> second.waitingThreads() == 1);
		assertThat(waiting).isNotDone();
		held.release();
		// woken by the release, long before the holder's lease time
		waiting.get(20, TimeUnit.SECONDS).orElseThrow().releaseAsync().get(20, TimeUnit.SECONDS);

		this.redis.opsForValue().set("counter", "0");
		StringRedisTemplate template = LockTestSupport.template(this.support.connectionFactory());
		ExecutorService work = Executors.newFixedThreadPool(2);
		try {
			List<CompletableFuture<Void>> all = new ArrayList<>();
			for (int i = 0; i < 60; i++) {
				RedisLockService service = (i % 2 == 0) ? first : second;
				all.add(service.acquireAsync(LockRequest.of("async", LONG_TTL, Duration.ofSeconds(60)), LockOwner.newOwner())
					.thenApplyAsync(lease -> {
						String value = template.opsForValue().get("counter");
						template.opsForValue().set("counter", Integer.toString(Integer.parseInt(value) + 1));
						return lease;
					}, work)
					.thenCompose(Lease::releaseAsync));
			}
			CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
		}
		finally {
			work.shutdownNow();
		}
		assertThat(this.redis.opsForValue().get("counter")).isEqualTo("60");
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
	}

	// 2. reentrancy and fencing tokens

	@Test
	void reentersToDepthThreeAndFreesTheKeyOnlyAfterTheLastRelease() throws Exception {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		Lease first = service.acquire("order-1", LONG_TTL, Duration.ZERO);
		Lease second = service.acquire("order-1", LONG_TTL, Duration.ZERO);
		Lease third = service.acquire("order-1", LONG_TTL, Duration.ZERO);
		assertThat(second.fencingToken()).isEqualTo(first.fencingToken());
		assertThat(third.fencingToken()).isEqualTo(first.fencingToken());
		assertThat(this.redis.opsForHash().get(service.redisKey("order-1"), first.owner())).isEqualTo("3");
		assertThat(service.activeLeases()).singleElement().satisfies(snapshot -> assertThat(snapshot.holdCount()).isEqualTo(3));

		ExecutorService otherThread = Executors.newSingleThreadExecutor();
		try {
			assertThat(tryOnceOn(otherThread, service, "order-1")).isEmpty();
			third.release();
			assertThat(tryOnceOn(otherThread, service, "order-1")).isEmpty();
			assertThat(tryOnceOn(otherThread, other, "order-1")).isEmpty();
			second.release();
			assertThat(tryOnceOn(otherThread, other, "order-1")).isEmpty();
			first.release();
			Optional<Lease> next = tryOnceOn(otherThread, other, "order-1");
			assertThat(next).isPresent();
			assertThat(next.get().fencingToken()).isGreaterThan(first.fencingToken());
			next.get().release();
		}
		finally {
			otherThread.shutdownNow();
		}
		assertThat(first.isHeld()).isFalse();
		assertThat(this.redis.hasKey(service.redisKey("order-1"))).isFalse();
	}

	private static Optional<Lease> tryOnceOn(ExecutorService thread, LockService service, String key) throws Exception {
		return thread.submit(() -> service.tryAcquire(key, LONG_TTL, Duration.ZERO)).get(10, TimeUnit.SECONDS);
	}

	@Test
	void fencingTokensGrowStrictlyBetweenSuccessiveHolders() {
		List<RedisLockService> owners = List.of(this.support.service(), this.support.service());
		long previous = 0;
		for (int i = 0; i < 1000; i++) {
			try (Lease lease = owners.get(i % 2).acquire("fenced", LONG_TTL, Duration.ofSeconds(5))) {
				assertThat(lease.fencingToken()).as("token of acquisition %d", i).isGreaterThan(previous);
				previous = lease.fencingToken();
			}
		}
	}

	// 3. owners

	@Test
	void aNonOwnerCannotReleaseOrRenewAnotherOwnersLease() throws Exception {
		RedisLockService service = this.support.service();
		Lease lease = service.acquire("owned", LONG_TTL, Duration.ZERO);
		String key = service.redisKey("owned");
		String token = Long.toString(lease.fencingToken());
		String stranger = "someone-else:1";

		assertThat(this.redis.execute(LockScripts.RELEASE, List.of(key), stranger, token, key + ":released", "someone-else"))
			.isEqualTo(List.of(-1L, 0L));
		assertThat(this.redis.execute(LockScripts.HAND_OVER, List.of(key), stranger, token, stranger, "1000")).isEqualTo(-1L);
		assertThat(this.redis.execute(LockScripts.EXTEND, List.of(key), stranger, token, "1", "set")).isEqualTo(-1L);
		assertThat(this.redis.execute(LockScripts.RENEW_ALL, List.of(key), stranger, token, "1")).isEqualTo(List.of(0L));
		// the right owner with a stale token (an earlier lease of the same owner) is no owner either
		assertThat(this.redis.execute(LockScripts.RELEASE, List.of(key), lease.owner(), "1", key + ":released", "x"))
			.isEqualTo(List.of(-1L, 0L));
		assertThat(this.redis.execute(LockScripts.HAND_OVER, List.of(key), lease.owner(), "1", stranger, "1000")).isEqualTo(-1L);
		assertThat(this.redis.execute(LockScripts.EXTEND, List.of(key), lease.owner(), "1", "1", "set")).isEqualTo(-1L);
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isGreaterThan(LONG_TTL.toMillis() - 5_000);
		assertThat(this.redis.opsForHash().get(key, lease.owner())).isEqualTo("1");

		// through the API: another instance neither gets the key nor disturbs the holder
		RedisLockService other = this.support.service();
		assertThat(other.tryAcquire("owned", LONG_TTL, Duration.ZERO)).isEmpty();
		assertThat(lease.isHeld()).isTrue();
		lease.release();
	}

	@Test
	void aLeaseIsReleasedThroughItsOwnerFromAnotherThread() throws Exception {
		RedisLockService service = this.support.service();
		Lease lease = service.acquire("handed-over", LONG_TTL, Duration.ZERO);
		CompletableFuture.runAsync(lease::release).get(10, TimeUnit.SECONDS);
		assertThat(lease.isHeld()).isFalse();
		assertThat(this.redis.hasKey(service.redisKey("handed-over"))).isFalse();
		assertThat(service.activeLeases()).isEmpty();
	}

	@Test
	void aReleasedHandleStaysReleasedAfterSomeoneElseAcquires() {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		Lease lease = service.acquire("reused", LONG_TTL, Duration.ZERO);
		lease.release();
		Lease next = other.acquire("reused", LONG_TTL, Duration.ZERO);
		assertThat(lease.isHeld()).isFalse();
		// released by this handle: no longer ours, whoever holds the key now
		assertThatExceptionOfType(LockNotOwnedException.class).isThrownBy(lease::release)
			.withMessageContaining("reused")
			.satisfies(ex -> assertThat(ex.getOwner()).isEqualTo(lease.owner()));
		assertThatExceptionOfType(LockNotOwnedException.class).isThrownBy(lease::renew).withMessageContaining("reused");
		assertThatExceptionOfType(LockNotOwnedException.class).isThrownBy(() -> lease.extend(Duration.ofSeconds(1)))
			.withMessageContaining("reused");
		lease.close(); // idempotent
		assertThat(next.isHeld()).isTrue();
		next.release();
	}

	@Test
	void extendAddsTimeAndRenewResetsToTheFullTtl() {
		RedisLockService service = this.support.service();
		Lease lease = service.tryAcquire(LockRequest.of("extended", Duration.ofSeconds(10), Duration.ZERO).withFixedLease())
			.orElseThrow();
		String key = service.redisKey("extended");
		lease.extend(Duration.ofSeconds(20));
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isBetween(25_000L, 30_000L);
		lease.renew();
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isBetween(5_000L, 10_000L);
		lease.release();
	}

	@Test
	void extendRenewAndReleaseOfALostLeaseFailWithANotOwnedError() {
		RedisLockService service = this.support.service();
		Lease lease = service.tryAcquire(LockRequest.of("vanishing", LONG_TTL, Duration.ZERO).withFixedLease()).orElseThrow();
		this.redis.delete(service.redisKey("vanishing"));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> lease.extend(Duration.ofSeconds(1)))
			.withMessageContaining("vanishing");
		assertThat(lease.isLost()).isTrue();
		assertThat(lease.isHeld()).isFalse();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::renew);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies(ex -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.FOUND_GONE_BY_HOLDER));
	}

	// 4. a dead holder

	@Test
	void aDeadHolderBlocksOthersForAtMostItsTtl() {
		Duration ttl = Duration.ofMillis(1500);
		RedisLockService survivor = this.support.service();
		List<Long> blocked = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			RedisLockService doomed = this.support.service();
			long acquiredAt = System.nanoTime();
			Lease abandoned = doomed.acquire("orphan", ttl, Duration.ZERO);
			doomed.close(); // its watchdog stops: the lease is never renewed nor released
			Lease next = survivor.acquire("orphan", LONG_TTL, Duration.ofSeconds(30));
			long blockedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acquiredAt);
			// never before its ttl, whatever the load: Redis expires it no sooner
			assertThat(blockedMillis).as("time the dead holder blocked the key").isGreaterThanOrEqualTo(ttl.toMillis() - 50);
			// and far from the 30 s the survivor would wait for it, even when a stall of the loaded machine came between
			assertThat(blockedMillis).as("time the dead holder blocked the key").isLessThan(ttl.toMillis() + 5_000);
			assertThat(next.fencingToken()).isGreaterThan(abandoned.fencingToken());
			next.release();
			blocked.add(blockedMillis);
		}
		// the survivor takes the key as it expires: the median of three rounds is within 500 ms of the ttl (one stall
		// of a loaded 2-core machine, up to 1-2 s, can delay one round; it would take two to move the median)
		Collections.sort(blocked);
		assertThat(blocked.get(1)).as("median time the dead holder blocked the key, of %s", blocked)
			.isLessThanOrEqualTo(ttl.toMillis() + 500);
	}

	// 5. the watchdog

	@Test
	void theWatchdogKeepsALeaseAliveWhileHeldAndStopsAfterRelease() {
		// renewed every 600 ms, the lease outlives stalls of 5 s (a 1 s lease renewed every 333 ms did not, issue 32)
		Duration ttl = LockTestSupport.RENEWED_TTL;
		Duration period = Duration.ofMillis((long) (ttl.toMillis() * LockTestSupport.QUICK_RENEWALS));
		AtomicInteger renewals = new AtomicInteger();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS)
			.listener(new LockListener() {
				@Override
				public void renewed(String name, boolean success) {
					renewals.incrementAndGet();
				}
			}));
		String key = service.redisKey("kept");
		Lease lease = service.acquire("kept", ttl, Duration.ZERO);
		// held past its ttl and through ten renewals, whichever takes longer: the key never expires meanwhile
		long pastTtl = System.nanoTime() + ttl.plusMillis(200).toNanos();
		await().atMost(Duration.ofSeconds(60)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20)).until(() -> {
			Long pttl = this.redis.getExpire(key, TimeUnit.MILLISECONDS);
			assertThat(pttl).as("PTTL while held").isPositive();
			return System.nanoTime() - pastTtl > 0 && renewals.get() >= 10;
		});
		assertThat(lease.isHeld()).isTrue();
		assertThat(lease.isOwned()).isTrue();
		assertThat(service.activeLeases()).singleElement().satisfies(s -> assertThat(s.lastRenewal()).isNotNull());
		lease.release();
		int renewalsAtRelease = renewals.get();
		assertThat(this.redis.hasKey(key)).isFalse();
		assertThat(service.activeLeases()).isEmpty();
		// the watchdog sends no renewal for the released lease, over three of its renewal periods; one sent before the
		// release may still report its "yes" after it (Redis ran it first), so one more is no renewal of a released lease
		await().during(period.multipliedBy(3)).atMost(period.multipliedBy(3).plusSeconds(10))
			.until(() -> renewals.get() <= renewalsAtRelease + 1);
		assertThat(this.redis.hasKey(key)).isFalse();

		// a fixed lease is not renewed: it is gone at its ttl (a short one: nothing is expected to keep it)
		Duration fixedTtl = Duration.ofSeconds(1);
		Lease fixed = service.tryAcquire(LockRequest.of("kept", fixedTtl, Duration.ZERO).withFixedLease()).orElseThrow();
		await().atMost(fixedTtl.plusSeconds(10)).until(() -> !this.redis.hasKey(key));
		assertThat(fixed.isHeld()).isFalse();
	}

	@Test
	void renewalsNeverRaceWithReleases() throws Exception {
		// Frequent renewals (every 200 ms), so that renewals are in flight all the time, released at every point of the
		// renewal cycle; some held through several renewals. The lease time is long all the same: a 600 ms lease renewed
		// as often was lost to a stall of a loaded machine, which has nothing to do with a race (issue 32).
		Duration ttl = LockTestSupport.RENEWED_TTL;
		List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(1.0 / 30)
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					lost.add(event);
				}
			}));
		List<Callable> tasks = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			int thread = t;
			tasks.add(() -> {
				for (int i = 0; i < 150; i++) {
					try (Lease lease = service.acquire("race-" + thread + "-" + (i % 3), ttl, Duration.ofSeconds(5))) {
						long holdMillis = (i % 15 == 0) ? 650 + (i * 37L) % 300 : (i * 7L) % 20;
						await().pollDelay(Duration.ofMillis(holdMillis)).atMost(Duration.ofSeconds(5)).until(() -> true);
						assertThat(lease.isHeld()).as("held after %d ms", holdMillis).isTrue();
					}
				}
				return null;
			});
		}
		runAll(tasks);
		assertThat(lost).isEmpty();
		assertThat(service.activeLeases()).isEmpty();
		// a renewal that lands after a release must not bring the lease back: no lease appears for five renewal periods
		await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10))
			.until(() -> LockTestSupport.withoutReceipts(this.redis.keys("lock:*")).isEmpty());
	}

	// 6. lost leases

	@Test
	void aDeletedLeaseIsReportedLostWithinOneRenewalPeriod() {
		// renewed every 600 ms; long enough that the loss is found by a renewal, never by the clock, however late the
		// renewal comes on a loaded machine (with 900 ms, a stall of 600 ms made the clock find it, issue 32)
		Duration ttl = LockTestSupport.RENEWED_TTL;
		Duration period = Duration.ofMillis((long) (ttl.toMillis() * LockTestSupport.QUICK_RENEWALS));
		List<LockLostEvent> listened = new CopyOnWriteArrayList<>();
		List<Object> published = new CopyOnWriteArrayList<>();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS)
			.eventPublisher(published::add)
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					listened.add(event);
				}
			}));
		Lease lease = service.acquire("deleted", ttl, Duration.ZERO);
		long deletedAt = System.nanoTime();
		this.redis.delete(service.redisKey("deleted"));
		await().atMost(ttl.plusSeconds(10)).pollInterval(Duration.ofMillis(10)).until(lease::isLost);
		// found at the next renewal (a period), with room for a stall of 2.4 s: half the lease time, after which only
		// the clock could have found it (and the detection below would say so)
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - deletedAt)).as("ms from the deletion to the loss")
			.isLessThan(period.plusMillis(2_400).toMillis());
		assertThat(lease.isHeld()).isFalse();
		// listed as lost, not counted as held, until the holder releases it
		assertThat(service.activeLeases()).singleElement().satisfies(snapshot -> {
			assertThat(snapshot.lost()).isTrue();
			assertThat(snapshot.ttlRemaining()).isZero();
		});
		assertThat(service.activeLeaseCount()).isZero();
		assertThat(service.lostLeaseCount()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> published.size() == 1);
		assertThat(published).singleElement().isInstanceOfSatisfying(LockLostEvent.class, event -> {
			assertThat(event.key()).isEqualTo("deleted");
			assertThat(event.owner()).isEqualTo(lease.owner());
			assertThat(event.fencingToken()).isEqualTo(lease.fencingToken());
			assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
		});
		assertThat(listened).hasSize(1);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies(ex -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE));
		assertThat(service.activeLeases()).isEmpty();
		assertThat(service.lostLeaseCount()).isZero();
	}

	@Test
	void aLostLeaseHeldTwiceIsListedUntilItsLastHoldIsReleased() {
		RedisLockService service = this.support.service();
		// the watchdog's first renewal, 10 s out, cannot find the loss before the holder does
		Lease outer = service.acquire("lost-twice", LONG_TTL, Duration.ZERO);
		Lease inner = service.acquire("lost-twice", LONG_TTL, Duration.ZERO);
		this.redis.delete(service.redisKey("lost-twice"));

		assertThatExceptionOfType(LockLostException.class).isThrownBy(inner::release)
			.satisfies(ex -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.FOUND_GONE_BY_HOLDER));
		assertThat(service.activeLeases()).singleElement().satisfies(snapshot -> {
			assertThat(snapshot.lost()).isTrue();
			assertThat(snapshot.holdCount()).isEqualTo(1);
		});
		assertThat(service.activeLeaseCount()).isZero();

		assertThatExceptionOfType(LockLostException.class).isThrownBy(outer::release);
		assertThat(service.activeLeases()).isEmpty();
		assertThat(service.lostLeaseCount()).isZero();
	}

	// 7. handoff latency

	@Test
	void aBlockedWaiterAcquiresWithin50msOfTheRelease() throws Exception {
		RedisLockService holderService = this.support.service();
		RedisLockService waiterService = this.support.service();
		ExecutorService waiterThread = Executors.newSingleThreadExecutor();
		List<Long> latencies = new ArrayList<>();
		try {
			for (int i = 0; i < 220; i++) {
				Lease held = holderService.acquire("handoff", LONG_TTL, Duration.ofSeconds(5));
				AtomicReference<Long> acquiredAt = new AtomicReference<>();
				Future<?> waiter = waiterThread.submit(() -> {
					Lease lease = waiterService.acquire("handoff", LONG_TTL, Duration.ofSeconds(20));
					acquiredAt.set(System.nanoTime());
					lease.release();
				});
				await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10))
					.until(() -> waiterService.waitingThreads() == 1);
				long releasedAt = System.nanoTime();
				held.release();
				waiter.get(20, TimeUnit.SECONDS);
				if (i >= 20) { // the first rounds warm up the JIT and the subscription
					latencies.add(acquiredAt.get() - releasedAt);
				}
			}
		}
		finally {
			waiterThread.shutdownNow();
		}
		Collections.sort(latencies);
		long p50 = latencies.get(latencies.size() / 2);
		long p90 = latencies.get((int) Math.ceil(latencies.size() * 0.9) - 1);
		long p99 = latencies.get((int) Math.ceil(latencies.size() * 0.99) - 1);
		System.out.printf("handoff latency over %d handoffs: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms%n",
				latencies.size(), p50 / 1e6, p90 / 1e6, p99 / 1e6, latencies.get(latencies.size() - 1) / 1e6);
		// The release message wakes the waiter: a typical handoff takes a few ms (p99 under 10 ms on an idle machine).
		// A waiter that missed it would wait for the holder's 30 s lease time. The median must stay under 50 ms: on a
		// loaded 2-core machine a handoff that waits for a time slice takes tens of ms, and a stall 1-2 s, but those hit
		// a few of the 200 handoffs, not half (a p99 bound failed under load, issue 32). And nine in ten within 500 ms.
		assertThat(TimeUnit.NANOSECONDS.toMillis(p50)).as("median handoff latency in ms over %d handoffs", latencies.size())
			.isLessThan(50);
		assertThat(TimeUnit.NANOSECONDS.toMillis(p90)).as("p90 handoff latency in ms over %d handoffs", latencies.size())
			.isLessThan(500);
	}

	// 8. the wait deadline

	@Test
	void aWaitEndsAtItsDeadline() {
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support.service();
		Lease held = holder.acquire("deadline", LONG_TTL, Duration.ZERO);

		// The bounds tell "ends at its deadline" from "waits for the holder's lease" (LONG_TTL, 30 s) with room for a
		// loaded 2-core machine, where one round trip has taken 150 ms, a wake-up 190 ms late, and a stall 1-2 s.
		long start = System.nanoTime();
		assertThat(waiter.tryAcquire("deadline", LONG_TTL, Duration.ofMillis(300))).isEmpty();
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(300L, 3_300L);

		start = System.nanoTime();
		assertThat(waiter.tryAcquire("deadline", LONG_TTL, Duration.ZERO)).isEmpty();
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000L);
		held.release();
	}

	@Test
	void anInterruptEndsTheWaitAndKeepsTheInterruptStatus() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support.service();
		Lease held = holder.acquire("interrupted", LONG_TTL, Duration.ZERO);
		CompletableFuture<Throwable> failure = new CompletableFuture<>();
		CompletableFuture<Boolean> interruptStatus = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				waiter.tryAcquire("interrupted", LONG_TTL, Duration.ofSeconds(30));
				failure.complete(null);
			}
			catch (RuntimeException ex) {
				failure.complete(ex);
			}
			interruptStatus.complete(Thread.currentThread().isInterrupted());
		});
		thread.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
		long interruptedAt = System.nanoTime();
		thread.interrupt();
		assertThat(failure.get(5, TimeUnit.SECONDS)).isInstanceOf(LockInterruptedException.class)
			.hasMessageContaining("interrupted");
		// at once, not at the wait's 30 s: room for a loaded machine's stall of 1-2 s
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interruptedAt)).isLessThan(5_000);
		assertThat(interruptStatus.get(5, TimeUnit.SECONDS)).isTrue();
		assertThat(waiter.waitingThreads()).isZero();
		held.release();
	}

	// 10. arguments

	@Test
	void invalidArgumentsAreRejectedWithMessagesNamingTheArgument() {
		RedisLockService service = this.support.service();
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire(" ", LONG_TTL, Duration.ZERO))
			.withMessageContaining("key");
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire(null, LONG_TTL, Duration.ZERO))
			.withMessageContaining("key");
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire("k", Duration.ZERO, Duration.ZERO))
			.withMessageContaining("ttl");
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire("k", Duration.ofSeconds(-1), Duration.ZERO))
			.withMessageContaining("ttl");
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire("k", LONG_TTL, Duration.ofMillis(-1)))
			.withMessageContaining("wait");
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire("k", null, Duration.ZERO))
			.withMessageContaining("ttl");
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire("k", LONG_TTL, null))
			.withMessageContaining("wait");
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("*"))).isEmpty();
	}

	@Test
	void theStoredTokenIsTheServerClockInMicroseconds() {
		RedisLockService service = this.support.service();
		List<?> time = this.redis.execute(RedisScript.of("return redis.call('time')", List.class), List.of());
		long before = Long.parseLong((String) time.get(0)) * 1_000_000 + Long.parseLong((String) time.get(1));
		try (Lease lease = service.acquire("clock", LONG_TTL, Duration.ZERO)) {
			assertThat(lease.fencingToken()).isGreaterThan(before).isLessThan(before + 60_000_000L);
			assertThat(this.redis.opsForHash().get(service.redisKey("clock"), LockScripts.TOKEN_FIELD))
				.isEqualTo(Long.toString(lease.fencingToken()));
		}
	}

	// 11. asking the store (redis-py's locked(), owned() and extend(t, replace_ttl=True); redsync's Valid() and Until())

	@Test
	void isLockedAndHolderAskTheStoreWhateverProcessHoldsTheKey() {
		RedisLockService holderService = this.support.service();
		RedisLockService asker = this.support.service();
		assertThat(asker.isLocked("asked")).isFalse();
		assertThat(asker.holder("asked")).isEmpty();
		Lease outer = holderService.acquire("asked", LONG_TTL, Duration.ZERO);
		Lease inner = holderService.acquire("asked", LONG_TTL, Duration.ZERO);
		assertThat(asker.isLocked("asked")).isTrue();
		assertThat(asker.holder("asked")).hasValueSatisfying(holder -> {
			assertThat(holder.key()).isEqualTo("asked");
			assertThat(holder.holds()).isEqualTo(2);
			assertThat(holder.fencingToken()).isEqualTo(outer.fencingToken());
			assertThat(holder.remainingTtl()).isPositive().isLessThanOrEqualTo(LONG_TTL);
		});
		assertThat(holderService.holder("asked")).hasValueSatisfying(holder -> assertThat(holder.holds()).isEqualTo(2));
		inner.release();
		assertThat(asker.holder("asked")).hasValueSatisfying(holder -> assertThat(holder.holds()).isEqualTo(1));
		outer.release();
		assertThat(asker.isLocked("asked")).isFalse();
		assertThat(asker.holder("asked")).isEmpty();
		assertThatIllegalArgumentException().isThrownBy(() -> asker.holder(" ")).withMessageContaining("key");
		assertThatIllegalArgumentException().isThrownBy(() -> asker.isLocked(null)).withMessageContaining("key");
	}

	@Test
	void aLeaseIsOwnedFromItsAcquisitionUntilItsRelease() {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		Lease lease = service.acquire("owned", LONG_TTL, Duration.ZERO);
		assertThat(lease.isOwned()).isTrue();
		// another service's attempt does not make it someone else's
		assertThat(other.tryAcquire("owned", LONG_TTL, Duration.ZERO)).isEmpty();
		assertThat(lease.isOwned()).isTrue();
		lease.release();
		assertThat(lease.isOwned()).isFalse();
		Lease next = other.acquire("owned", LONG_TTL, Duration.ZERO);
		assertThat(next.isOwned()).isTrue();
		assertThat(lease.isOwned()).as("the released handle, with the key held by another owner").isFalse();
		next.release();
	}

	@Test
	void aLeaseTakenOverByAnotherOwnerIsNotOwnedAndIsReportedLostOnce() {
		List<LockLostEvent> listened = new CopyOnWriteArrayList<>();
		List<Object> published = new CopyOnWriteArrayList<>();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.eventPublisher(published::add)
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					listened.add(event);
				}
			}));
		RedisLockService other = this.support.service();
		Lease lease = service.acquire("taken", LONG_TTL, Duration.ZERO);
		// as if the lease had expired during a pause: gone, and another owner took the key (its watchdog renews in
		// 10 s, so the question below is what finds the loss)
		this.redis.delete(service.redisKey("taken"));
		Lease thief = other.acquire("taken", LONG_TTL, Duration.ZERO);
		assertThat(lease.isHeld()).as("the process's own view, before it asks").isTrue();

		assertThat(lease.isOwned()).isFalse();
		assertThat(lease.isLost()).isTrue();
		assertThat(lease.isHeld()).isFalse();
		assertThat(lease.validUntil()).isBeforeOrEqualTo(java.time.Instant.now());
		assertThat(lease.isOwned()).isFalse();
		assertThat(listened).singleElement().satisfies(event -> {
			assertThat(event.key()).isEqualTo("taken");
			assertThat(event.fencingToken()).isEqualTo(lease.fencingToken());
			assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.FOUND_GONE_BY_HOLDER);
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> published.size() == 1);
		assertThat(service.lostLeaseCount()).isEqualTo(1);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies(ex -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.FOUND_GONE_BY_HOLDER));
		assertThat(thief.isOwned()).isTrue();
		assertThat(other.holder("taken")).hasValueSatisfying(holder -> assertThat(holder.fencingToken()).isEqualTo(thief.fencingToken()));
		assertThat(listened).hasSize(1);
		thief.release();
	}

	@Test
	void aFixedLeasePastItsTimeIsNotOwnedOnceAnotherOwnerTookTheKey() {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		Lease lease = service.acquire(LockRequest.of("expiring", Duration.ofMillis(300), Duration.ZERO).withFixedLease());
		Lease next = other.acquire("expiring", LONG_TTL, Duration.ofSeconds(10));
		assertThat(lease.isOwned()).isFalse();
		assertThat(lease.isHeld()).isFalse();
		assertThat(next.isOwned()).isTrue();
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		next.release();
	}

	@Test
	void validUntilIsWhatTheStoreLastConfirmed() {
		RedisLockService service = this.support.service();
		java.time.Instant before = java.time.Instant.now();
		Lease lease = service.acquire(LockRequest.of("validity", Duration.ofSeconds(10), Duration.ZERO).withFixedLease());
		java.time.Instant after = java.time.Instant.now();
		// counted from when the acquisition was sent: never later than the store keeps it
		assertThat(lease.validUntil()).isAfter(before.plusSeconds(9)).isBeforeOrEqualTo(after.plusSeconds(10));
		// the store keeps it longer (as after an extension by another handle): an ownership check learns that
		this.redis.expire(service.redisKey("validity"), Duration.ofSeconds(60));
		assertThat(lease.validUntil()).isBeforeOrEqualTo(java.time.Instant.now().plusSeconds(10));
		assertThat(lease.isOwned()).isTrue();
		assertThat(lease.validUntil()).isAfter(java.time.Instant.now().plusSeconds(50));
		lease.extend(Duration.ofSeconds(2), ExtendMode.REPLACE);
		assertThat(lease.validUntil()).isBeforeOrEqualTo(java.time.Instant.now().plusSeconds(2));
		lease.release();
		assertThat(lease.validUntil()).isBeforeOrEqualTo(java.time.Instant.now());
	}

	@Test
	void replaceSetsExactlyTheNewTimeWhereAddAddsToIt() {
		RedisLockService service = this.support.service();
		Lease lease = service.acquire(LockRequest.of("replaced", Duration.ofSeconds(10), Duration.ZERO).withFixedLease());
		String key = service.redisKey("replaced");
		// redis-py: extend(10, replace_ttl=True) on a 10 s lock leaves at most 10 s, where extend(10) leaves about 20
		// (the lower bounds leave 4 s for the calls in between, room for a loaded machine's stalls: the bounds still
		// tell each result from the other's)
		lease.extend(Duration.ofSeconds(10), ExtendMode.REPLACE);
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isBetween(6_000L, 10_000L);
		lease.extend(Duration.ofSeconds(10), ExtendMode.ADD);
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isBetween(12_000L, 20_000L);
		// replace also shortens
		lease.extend(Duration.ofSeconds(3), ExtendMode.REPLACE);
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isPositive().isLessThanOrEqualTo(3_000L);
		assertThat(lease.isOwned()).isTrue();
		lease.release();
		assertThatExceptionOfType(LockNotOwnedException.class)
			.isThrownBy(() -> lease.extend(Duration.ofSeconds(1), ExtendMode.REPLACE)).withMessageContaining("replaced");
	}

	@Test
	void aReplacedTimeIsWhatTheWatchdogRenewsToFromThenOn() {
		AtomicInteger renewals = new AtomicInteger();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS)
			.listener(new LockListener() {
				@Override
				public void renewed(String name, boolean success) {
					if (success) {
						renewals.incrementAndGet();
					}
				}
			}));
		Lease lease = service.acquire("rescheduled", Duration.ofMinutes(2), Duration.ZERO);
		String key = service.redisKey("rescheduled");
		// the watchdog planned its next renewal 12 s out; with 6 s left the lease would expire before that (were the
		// renewals not rescheduled, it would be lost); renewed every 600 ms from now on, it outlives stalls of 5 s
		Duration replaced = LockTestSupport.RENEWED_TTL;
		lease.extend(replaced, ExtendMode.REPLACE);
		int before = renewals.get();
		// five renewals, every 600 ms, whenever they come: past the renewal planned before the replace, the lease would
		// be lost meanwhile
		await().atMost(LockTestSupport.RENEWAL_DEADLINE).until(() -> renewals.get() >= before + 5);
		assertThat(lease.isLost()).isFalse();
		assertThat(lease.isOwned()).isTrue();
		// renewed to the replaced time, not to the 2 minutes it was acquired with
		assertThat(this.redis.getExpire(key, TimeUnit.MILLISECONDS)).isPositive().isLessThanOrEqualTo(replaced.toMillis());
		lease.release();
	}

	@Test
	void invalidExtensionsAreRejectedNamingTheKey() {
		RedisLockService service = this.support.service();
		try (Lease lease = service.acquire("badly-extended", LONG_TTL, Duration.ZERO)) {
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ZERO, ExtendMode.REPLACE))
				.withMessageContaining("badly-extended").withMessageContaining("at least 1ms");
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofNanos(500), ExtendMode.ADD))
				.withMessageContaining("badly-extended");
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofSeconds(-1)))
				.withMessageContaining("badly-extended");
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofSeconds(1), null))
				.withMessageContaining("badly-extended");
			// beyond a year PEXPIRE may overflow: refused before anything reaches Redis, both ways
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofDays(366)))
				.withMessage("Lease extension must be at most 365 days, but was PT8784H for lock 'badly-extended'");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> lease.extend(Duration.ofSeconds(Long.MAX_VALUE), ExtendMode.REPLACE))
				.withMessageStartingWith("Replacement lease time must be at most 365 days")
				.withMessageContaining("badly-extended");
			assertThat(lease.isOwned()).isTrue();
			assertThat(this.redis.getExpire(service.redisKey("badly-extended"), TimeUnit.MILLISECONDS)).isGreaterThan(20_000L)
				.isLessThanOrEqualTo(LONG_TTL.toMillis());
		}
	}

	@Test
	void aTtlLongerThanAYearIsRejectedNamingTheKeyBeforeAnythingReachesRedis() {
		RedisLockService service = this.support.service();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> service.tryAcquire("year-long", Duration.ofDays(366), Duration.ZERO))
			.withMessage("'ttl' of lock 'year-long' must be at most 365 days, but was PT8784H");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> service.tryAcquire(new LockRequest("year-long", Duration.ofSeconds(Long.MAX_VALUE),
					Duration.ZERO, true, null, LockMode.WRITE)))
			.withMessageStartingWith("'ttl' of lock 'year-long' must be at most 365 days");
		// about 3 million years: Lua hands PEXPIRE "1e+17", which Redis refuses after the HSET of the new lease
		assertThatIllegalArgumentException()
			.isThrownBy(() -> service.tryAcquire("year-long", Duration.ofMillis(100_000_000_000_000_000L), Duration.ZERO))
			.withMessageContaining("'year-long'");
		assertThat(this.redis.hasKey(service.redisKey("year-long"))).isFalse();
		// a year itself is fine, and Redis keeps it with that expiry
		try (Lease lease = service.acquire("year-long", Duration.ofDays(365), Duration.ZERO)) {
			assertThat(this.redis.getExpire(service.redisKey("year-long"), TimeUnit.DAYS)).isBetween(364L, 365L);
			lease.extend(Duration.ofDays(365), ExtendMode.REPLACE);
			assertThat(this.redis.getExpire(service.redisKey("year-long"), TimeUnit.DAYS)).isBetween(364L, 365L);
		}
	}

}
