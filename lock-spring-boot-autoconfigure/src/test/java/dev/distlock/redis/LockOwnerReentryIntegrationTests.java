package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Re-entry follows the {@link LockOwner}, not the thread (issue 13): owners bound in turn on one thread exclude each
 * other, one owner bound on two threads re-enters, and a thread's own owner behaves as before. On one Redis, and on a
 * Redlock of three.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockOwnerReentryIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	@Test
	void ownersBoundInTurnOnOneThreadExcludeEachOther() {
		RedisLockService service = this.support.service();
		twoOwnersOnOneThreadExcludeEachOther(service);
		assertThat(server.execute("EXISTS", service.redisKey("owned"))).isEqualTo(0L);
	}

	@Test
	void oneOwnerBoundOnTwoThreadsReenters() throws Exception {
		RedisLockService service = this.support.service();
		Lease outer = oneOwnerOnTwoThreadsReenters(service);
		assertThat(server.execute("HGET", service.redisKey("owned"), outer.owner())).isEqualTo("1");
		outer.release();
		assertThat(server.execute("EXISTS", service.redisKey("owned"))).isEqualTo(0L);
	}

	/**
	 * A re-entry raises the count in Redis to a target rather than adding one (so that it counts once when it runs
	 * twice): concurrent re-entries of one owner each reserve their own target, and Redis counts every one of them.
	 */
	@Test
	void concurrentReentriesOfOneOwnerEachCount() throws Exception {
		RedisLockService service = this.support.service();
		// several rounds: a re-entry reserved just as another is counted is the interleaving that once miscounted
		for (int round = 0; round < 10; round++) {
			concurrentReentries(service, "owned-" + round);
		}
	}

	private void concurrentReentries(RedisLockService service, String key) throws Exception {
		LockOwner owner = LockOwner.newOwner();
		Lease outer = service.tryAcquireAsync(dev.distlock.core.LockRequest.of(key, TTL, Duration.ZERO), owner)
			.get(30, TimeUnit.SECONDS).orElseThrow();
		int threads = 8;
		java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
		List<CompletableFuture<Lease>> inner = new java.util.ArrayList<>();
		java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
		for (int i = 0; i < threads; i++) {
			inner.add(CompletableFuture.supplyAsync(() -> {
				try (LockOwner.Binding binding = owner.bind()) {
					start.await(30, TimeUnit.SECONDS);
					return service.acquire(key, TTL, Duration.ZERO);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, pool));
		}
		pool.shutdown();
		for (CompletableFuture<Lease> each : inner) {
			assertThat(each.get(30, TimeUnit.SECONDS).fencingToken()).isEqualTo(outer.fencingToken());
		}
		assertThat(server.execute("HGET", service.redisKey(key), outer.owner())).as("holds Redis counts of %s", key)
			.isEqualTo(Integer.toString(threads + 1));
		for (CompletableFuture<Lease> each : inner) {
			each.get().release();
			assertThat(server.execute("EXISTS", service.redisKey(key))).isEqualTo(1L);
		}
		outer.release();
		assertThat(server.execute("EXISTS", service.redisKey(key))).isEqualTo(0L);
	}

	@Test
	void aThreadsOwnOwnerIsUnchanged() throws Exception {
		RedisLockService service = this.support.service();
		threadDefault(service);
		assertThat(server.execute("EXISTS", service.redisKey("owned"))).isEqualTo(0L);
	}

	@Test
	void ownerIdsAreTheClientIdAndRandomBitsForEveryOwnerAndTheHolderLabelNamesTheOwner() {
		// issue 29: an owner id no longer names the thread nor counts, so one id does not tell the next
		RedisLockService service = this.support.service();
		String randomPart = "[A-Za-z0-9_-]{22}";
		try (Lease lease = service.acquire("thread-id", TTL, Duration.ZERO)) {
			assertThat(lease.owner()).matches(Pattern.quote(service.clientId()) + ":" + randomPart);
			assertThat(lease.holder().ownerDescription())
				.isEqualTo("thread \"" + Thread.currentThread().getName() + "\"");
		}
		try (LockOwner.Binding binding = LockOwner.newOwner("async Catalog.hold").bind();
				Lease lease = service.acquire("thread-id", TTL, Duration.ZERO)) {
			assertThat(lease.owner()).matches(Pattern.quote(service.clientId()) + ":" + randomPart);
			assertThat(lease.holder().ownerDescription()).isEqualTo("async Catalog.hold");
		}
	}

	@Test
	void redlockReentryFollowsTheOwnerToo() throws Exception {
		try (RedlockNodesFixture nodes = new RedlockNodesFixture(3)) {
			RedlockLockService service = nodes.service(nodes.builder());
			twoOwnersOnOneThreadExcludeEachOther(service);
			oneOwnerOnTwoThreadsReenters(service).release();
			threadDefault(service);
			assertThat(service.activeLeases()).isEmpty();
		}
	}

	@Test
	void aLostRedlockLeaseRunsItsHoldsLostActionOnceAndAReleasedHoldsNever() throws Exception {
		try (RedlockNodesFixture nodes = new RedlockNodesFixture(3)) {
			RedlockLockService service = nodes.service(nodes.builder());
			Lease outer = service.acquire("lost", TTL, Duration.ZERO);
			Lease inner = service.acquire("lost", TTL, Duration.ZERO);
			List<LockLostEvent> outerLost = new CopyOnWriteArrayList<>();
			List<LockLostEvent> innerLost = new CopyOnWriteArrayList<>();
			outer.onLost(outerLost::add);
			inner.onLost(innerLost::add);
			inner.release();
			assertThat(service.forceRelease("lost")).isPresent();
			assertThat(outer.isOwned()).isFalse();
			assertThat(outer.isOwned()).isFalse();
			await().atMost(Duration.ofSeconds(10)).until(() -> outerLost.size() == 1);
			assertThat(innerLost).isEmpty();
			List<LockLostEvent> late = new CopyOnWriteArrayList<>();
			outer.onLost(late::add);
			assertThat(late).containsExactlyElementsOf(outerLost);
			assertThatExceptionOfType(LockLostException.class)
				.isThrownBy(outer::release);
			assertThat(outerLost).hasSize(1);
		}
	}

	private static void twoOwnersOnOneThreadExcludeEachOther(LockService service) {
		LockOwner first = LockOwner.newOwner();
		LockOwner second = LockOwner.newOwner();
		Lease held;
		try (LockOwner.Binding binding = first.bind()) {
			held = service.acquire("owned", TTL, Duration.ZERO);
		}
		try (LockOwner.Binding binding = second.bind()) {
			// the same thread, another owner: it waits (here 200ms) and does not get the lease
			Optional<Lease> other = service.tryAcquire("owned", TTL, Duration.ofMillis(200));
			assertThat(other).isEmpty();
		}
		try (LockOwner.Binding binding = first.bind()) {
			try (Lease again = service.acquire("owned", TTL, Duration.ZERO)) {
				assertThat(again.fencingToken()).isEqualTo(held.fencingToken());
			}
		}
		// the thread's own owner is not the first one either
		assertThat(service.tryAcquire("owned", TTL, Duration.ZERO)).isEmpty();
		held.release();
		try (LockOwner.Binding binding = second.bind(); Lease next = service.acquire("owned", TTL, Duration.ZERO)) {
			assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
		}
	}

	private static <S extends LockService & LockOperatorView> Lease oneOwnerOnTwoThreadsReenters(S service)
			throws Exception {
		LockOwner owner = LockOwner.newOwner();
		Lease outer;
		try (LockOwner.Binding binding = owner.bind()) {
			outer = service.acquire("owned", TTL, Duration.ZERO);
		}
		Lease inner = CompletableFuture.supplyAsync(() -> {
			try (LockOwner.Binding binding = owner.bind()) {
				return service.acquire("owned", TTL, Duration.ZERO);
			}
		}).get(30, TimeUnit.SECONDS);
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(inner.owner()).isEqualTo(outer.owner());
		assertThat(service.activeLeases()).singleElement()
			.satisfies(lease -> assertThat(lease.holdCount()).isEqualTo(2));
		// another thread's own owner still waits for it
		assertThat(CompletableFuture.supplyAsync(() -> service.tryAcquire("owned", TTL, Duration.ZERO))
			.get(30, TimeUnit.SECONDS)).isEmpty();
		inner.release();
		assertThat(outer.isHeld()).isTrue();
		return outer;
	}

	private static void threadDefault(LockService service) throws Exception {
		try (Lease outer = service.acquire("owned", TTL, Duration.ZERO);
				Lease inner = service.acquire("owned", TTL, Duration.ZERO)) {
			assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
			assertThat(CompletableFuture.supplyAsync(() -> service.tryAcquire("owned", TTL, Duration.ZERO))
				.get(30, TimeUnit.SECONDS)).isEmpty();
		}
	}

}
