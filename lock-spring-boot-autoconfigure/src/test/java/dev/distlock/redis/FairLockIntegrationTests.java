package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.AfterEach;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fair locks on one redis-server: FIFO across processes (services), hand-over by message, dead and long waiters,
 * leaving the queue, a holder that never unlocks, renewal and loss, and nothing left in Redis.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FairLockIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Duration WAIT = Duration.ofSeconds(30);

	/**
	 * The queue entry ttl of tests whose waiters must keep their places: a waiter refreshes its entry every third of
	 * it, so 6 s survives a stall of 4 s; a loaded 2-core machine stalls for 1-2 s, as long as two thirds of 2 s
	 * (issue 32).
	 */
	private static final Duration ENTRY_TTL = Duration.ofSeconds(6);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	private RedisLockService service(Duration entryTtl) {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory()).fairEntryTtl(entryTtl));
	}

	private static Optional<Lease> fair(RedisLockService service, String key, Duration ttl, Duration wait) {
		return service.tryAcquire(LockRequest.of(key, ttl, wait).fair());
	}

	private long queued(RedisLockService service, String key) {
		return (Long) this.server.execute("ZCARD", service.redisKey(key) + ":q");
	}

	private void awaitQueued(RedisLockService service, String key, long count) {
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2))
			.until(() -> queued(service, key) == count);
	}

	private void assertNothingLeft() {
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
			.untilAsserted(() -> assertThat(LockTestSupport.leftKeys(this.server, "*")).isEmpty());
	}

	@Test
	void waitersOfTwoProcessesGetTheLockInTheOrderTheyQueued() throws Exception {
		RedisLockService holder = service(ENTRY_TTL);
		RedisLockService one = service(ENTRY_TTL);
		RedisLockService two = service(ENTRY_TTL);
		Lease first = fair(holder, "fifo", TTL, Duration.ZERO).orElseThrow();
		List<String> order = new CopyOnWriteArrayList<>();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		List<Future<?>> waiters = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			RedisLockService service = (i % 2 == 0) ? one : two;
			String name = "w" + i;
			waiters.add(this.threads.submit(() -> {
				try (Lease lease = fair(service, "fifo", TTL, WAIT).orElseThrow()) {
					order.add(name);
					tokens.add(lease.fencingToken());
				}
				return null;
			}));
			awaitQueued(holder, "fifo", i + 1);
		}
		assertThat(holder.fairQueueLength("fifo")).isEqualTo(6);
		LocksEndpoint.LocksDescriptor locks = new LocksEndpoint(holder, Show.ALWAYS, Set.of()).locks(SecurityContext.NONE);
		assertThat(locks.leases()).singleElement().satisfies(lease -> {
			assertThat(lease.mode()).isEqualTo(LockMode.FAIR);
			assertThat(lease.queueLength()).isEqualTo(6L);
		});
		first.release();
		for (Future<?> waiter : waiters) {
			waiter.get(30, TimeUnit.SECONDS);
		}
		assertThat(order).containsExactly("w0", "w1", "w2", "w3", "w4", "w5");
		assertThat(tokens).isSorted().doesNotHaveDuplicates().allSatisfy(t -> assertThat(t).isGreaterThan(first.fencingToken()));
		assertNothingLeft();
	}

	@Test
	void theNextHolderEntersOnTheHandOverMessageWithoutAnAttemptOfItsOwn() throws Exception {
		// keepalives every 20 s and a holder renewed to 30 s: only the hand-over message can wake the waiter sooner
		RedisLockService holder = service(Duration.ofSeconds(60));
		RedisLockService waiting = service(Duration.ofSeconds(60));
		Lease first = fair(holder, "message", TTL, Duration.ZERO).orElseThrow();
		Future<Lease> next = this.threads.submit(() -> fair(waiting, "message", TTL, WAIT).orElseThrow());
		awaitQueued(holder, "message", 1);
		// the waiting process's hand-over channel of the key (release channel + ':' + its client id) is subscribed
		String channels = holder.redisKey("message") + ":released:*";
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2))
			.until(() -> ((List<?>) this.server.execute("PUBSUB", "CHANNELS", channels)).size() == 1);
		long released = System.nanoTime();
		first.release();
		// sooner than any keepalive (20 s), with room for a loaded machine's stalls
		Lease lease = next.get(10, TimeUnit.SECONDS);
		assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(10));
		assertThat(lease.fencingToken()).isGreaterThan(first.fencingToken())
			.isEqualTo(Long.parseLong((String) this.server.execute("HGET", holder.redisKey("message"), "~t")));
		assertThat(waiting.activeLeases()).singleElement().satisfies(s -> assertThat(s.mode()).isEqualTo(LockMode.FAIR));
		// the short grant is raised to the lease time by the first renewal
		await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(20))
			.until(() -> (Long) this.server.execute("PTTL", holder.redisKey("message")) > 29_000);
		lease.release();
		assertNothingLeft();
	}

	@Test
	void aDeadWaiterDelaysTheNextOneByAboutOneEntryTtl() throws Exception {
		Duration entryTtl = Duration.ofMillis(800);
		RedisLockService holder = service(entryTtl);
		RedisLockService next = service(entryTtl);
		FaultProxy proxy = FaultProxy.to(this.server);
		LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port());
		try {
		RedisLockService dying = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(Duration.ofMillis(500)))
			.fairEntryTtl(entryTtl));
		Lease first = fair(holder, "dead", TTL, Duration.ZERO).orElseThrow();
		dying.tryAcquireAsync(LockRequest.of("dead", TTL, WAIT).fair(), LockOwner.newOwner());
		awaitQueued(holder, "dead", 1);
		Future<Lease> live = this.threads.submit(() -> fair(next, "dead", TTL, WAIT).orElseThrow());
		awaitQueued(holder, "dead", 2);
		proxy.blackhole(); // its process is cut off for good: no keepalive, no leave, no message
		long released = System.nanoTime();
		first.release(); // handed to the dead waiter, for what is left of its entry at most
		Lease lease = live.get(20, TimeUnit.SECONDS);
		Duration delay = Duration.ofNanos(System.nanoTime() - released);
		// one entry ttl plus one keepalive interval, with room for a loaded machine's stalls (1-2 s, and the live
		// waiter's own short entry may have to be queued again after one); its 30 s ttl was never granted
		assertThat(delay).isLessThan(entryTtl.multipliedBy(3).plusSeconds(5));
		lease.release();
		assertNothingLeft();
		}
		finally {
			viaProxy.close();
			proxy.close();
		}
	}

	@Test
	void aWaiterThatWaitsLongerThanManyEntryTtlsIsNeverDropped() throws Exception {
		Duration entryTtl = Duration.ofMillis(300);
		RedisLockService holder = service(entryTtl);
		RedisLockService waiting = service(entryTtl);
		Lease first = fair(holder, "long", TTL, Duration.ZERO).orElseThrow();
		Future<Lease> next = this.threads.submit(() -> fair(waiting, "long", TTL, WAIT).orElseThrow());
		awaitQueued(holder, "long", 1);
		long queuedAt = System.nanoTime();
		// the entry is still there after 4 entry ttls: each keepalive pushed its deadline on
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).untilAsserted(() -> {
			assertThat(queued(holder, "long")).isEqualTo(1);
			assertThat(Duration.ofNanos(System.nanoTime() - queuedAt)).isGreaterThan(entryTtl.multipliedBy(4));
		});
		first.release();
		next.get(10, TimeUnit.SECONDS).release();
		assertNothingLeft();
	}

	@Test
	void aWaiterThatTimesOutOrIsInterruptedLeavesTheQueueAtOnce() throws Exception {
		RedisLockService holder = service(Duration.ofSeconds(60));
		RedisLockService waiting = service(Duration.ofSeconds(60));
		Lease first = fair(holder, "leave", TTL, Duration.ZERO).orElseThrow();
		assertThat(fair(waiting, "leave", TTL, Duration.ofMillis(300))).isEmpty();
		assertThat(queued(holder, "leave")).isZero(); // left before the call returned, not by expiry (60 s)
		AtomicReference<Thread> thread = new AtomicReference<>();
		Future<Object> interrupted = this.threads.submit(() -> {
			thread.set(Thread.currentThread());
			try {
				return fair(waiting, "leave", TTL, WAIT);
			}
			catch (LockInterruptedException ex) {
				return ex;
			}
		});
		awaitQueued(holder, "leave", 1);
		thread.get().interrupt();
		assertThat(interrupted.get(10, TimeUnit.SECONDS)).isInstanceOf(LockInterruptedException.class);
		awaitQueued(holder, "leave", 0);
		// an asynchronous waiter that is cancelled leaves as well
		CompletableFuture<Optional<Lease>> cancelled = waiting
			.tryAcquireAsync(LockRequest.of("leave", TTL, WAIT).fair(), LockOwner.newOwner());
		awaitQueued(holder, "leave", 1);
		assertThat(cancelled.cancel(false)).isTrue();
		awaitQueued(holder, "leave", 0);
		first.release();
		assertNothingLeft();
	}

	@Test
	void asynchronousOwnersQueueInOrder() throws Exception {
		RedisLockService holder = service(ENTRY_TTL);
		RedisLockService waiting = service(ENTRY_TTL);
		Lease first = fair(holder, "async", TTL, Duration.ZERO).orElseThrow();
		List<CompletableFuture<Optional<Lease>>> futures = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			futures.add(waiting.tryAcquireAsync(LockRequest.of("async", TTL, WAIT).fair(), LockOwner.newOwner()));
			awaitQueued(holder, "async", i + 1);
		}
		first.release();
		long previous = first.fencingToken();
		for (CompletableFuture<Optional<Lease>> future : futures) {
			Lease lease = future.get(10, TimeUnit.SECONDS).orElseThrow();
			assertThat(lease.fencingToken()).isGreaterThan(previous);
			previous = lease.fencingToken();
			lease.releaseAsync().get(10, TimeUnit.SECONDS);
		}
		assertNothingLeft();
	}

	@Test
	void theHeadGetsTheLockWhenTheHolderNeverUnlocks() throws Exception {
		RedisLockService holder = service(Duration.ofMillis(600));
		RedisLockService waiting = service(Duration.ofMillis(600));
		Duration fixed = Duration.ofSeconds(1);
		long acquired = System.nanoTime();
		Lease abandoned = holder.tryAcquire(LockRequest.of("expires", fixed, Duration.ZERO).withFixedLease().fair())
			.orElseThrow(); // never released
		Lease next = fair(waiting, "expires", TTL, WAIT).orElseThrow();
		Duration waited = Duration.ofNanos(System.nanoTime() - acquired);
		// the holder's ttl plus about one keepalive (200 ms), with room for a loaded machine's stalls (1-2 s): far from
		// the 30 s the waiter would wait for a lease that never expires
		assertThat(waited).isGreaterThanOrEqualTo(fixed.minusMillis(50)).isLessThan(fixed.plusSeconds(5));
		assertThat(next.fencingToken()).isGreaterThan(abandoned.fencingToken());
		next.release();
		assertNothingLeft();
	}

	@Test
	void theWatchdogRenewsAFairLeaseAndALostOneIsAnnounced() throws Exception {
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.fairEntryTtl(ENTRY_TTL)
			.renewalRatio(LockTestSupport.QUICK_RENEWALS));
		// renewed every 600 ms, the lease outlives stalls of 5 s (a 600 ms lease renewed every 200 ms did not, issue 32)
		Duration ttl = LockTestSupport.RENEWED_TTL;
		Lease lease = fair(service, "renewed", ttl, Duration.ZERO).orElseThrow();
		String key = service.redisKey("renewed");
		long granted = (Long) this.server.execute("PEXPIRETIME", key);
		// renewed in Redis: it expires later than its acquisition had it, and it is still ours
		LockTestSupport.awaitRenewal(service, lease);
		assertThat((Long) this.server.execute("PEXPIRETIME", key)).isGreaterThan(granted);
		assertThat(lease.isOwned()).isTrue();
		CountDownLatch lost = new CountDownLatch(1);
		AtomicReference<LockLostEvent> event = new AtomicReference<>();
		lease.onLost(e -> {
			event.set(e);
			lost.countDown();
		});
		this.server.execute("DEL", service.redisKey("renewed"));
		assertThat(lost.await(20, TimeUnit.SECONDS)).isTrue();
		assertThat(event.get().fencingToken()).isEqualTo(lease.fencingToken());
		List<LeaseSnapshot> leases = service.activeLeases();
		assertThat(leases).singleElement().satisfies(s -> assertThat(s.lost()).isTrue());
		assertNothingLeft();
	}

	@Test
	void aReentryCountsOnTheFairLeaseAndOnlyTheLastReleaseHandsItOn() throws Exception {
		RedisLockService holder = service(ENTRY_TTL);
		RedisLockService waiting = service(ENTRY_TTL);
		Lease outer = fair(holder, "reentry", TTL, Duration.ZERO).orElseThrow();
		Lease inner = fair(holder, "reentry", TTL, Duration.ZERO).orElseThrow();
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		Future<Lease> next = this.threads.submit(() -> fair(waiting, "reentry", TTL, WAIT).orElseThrow());
		awaitQueued(holder, "reentry", 1);
		inner.release();
		assertThat(queued(holder, "reentry")).isEqualTo(1);
		assertThat(this.server.execute("HGET", holder.redisKey("reentry"), outer.owner())).isEqualTo("1");
		outer.release();
		next.get(10, TimeUnit.SECONDS).release();
		assertNothingLeft();
	}

	@Test
	void twoHundredThreadsOfTwoProcessesTakeTurnsWithoutOverlapOrFreezing() throws Exception {
		RedisLockService one = service(ENTRY_TTL);
		RedisLockService two = service(ENTRY_TTL);
		java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
		java.util.concurrent.atomic.AtomicBoolean overlap = new java.util.concurrent.atomic.AtomicBoolean();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		List<Future<?>> calls = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			RedisLockService service = (i % 2 == 0) ? one : two;
			calls.add(this.threads.submit(() -> {
				try (Lease lease = fair(service, "crowd", TTL, Duration.ofSeconds(90)).orElseThrow()) {
					if (inside.incrementAndGet() != 1) {
						overlap.set(true);
					}
					tokens.add(lease.fencingToken());
					inside.decrementAndGet();
				}
				return null;
			}));
		}
		for (Future<?> call : calls) {
			call.get(100, TimeUnit.SECONDS);
		}
		assertThat(overlap).isFalse();
		assertThat(tokens).hasSize(200).isSorted().doesNotHaveDuplicates();
		assertNothingLeft();
	}

	@Test
	void anAsynchronousOwnerReentersItsFairLeaseAndAcquiresAnewWhenItWasGone() throws Exception {
		RedisLockService service = service(ENTRY_TTL);
		LockOwner owner = LockOwner.newOwner();
		LockRequest request = LockRequest.of("async-reentry", TTL, Duration.ofSeconds(5)).fair();
		Lease first = service.tryAcquireAsync(request, owner).get(10, TimeUnit.SECONDS).orElseThrow();
		Lease again = service.tryAcquireAsync(request, owner).get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(again.fencingToken()).isEqualTo(first.fencingToken());
		this.server.execute("DEL", service.redisKey("async-reentry"));
		Lease fresh = service.tryAcquireAsync(request, owner).get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(fresh.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(service.activeLeases()).anySatisfy(s -> assertThat(s.mode()).isEqualTo(LockMode.FAIR));
		fresh.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(org.assertj.core.api.Assertions.catchThrowable(again::release)).isNotNull();
		assertThat(org.assertj.core.api.Assertions.catchThrowable(first::release)).isNotNull();
		assertNothingLeft();
	}

}
