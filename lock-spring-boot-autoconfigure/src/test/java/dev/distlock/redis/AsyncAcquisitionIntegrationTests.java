package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@link RedisLockService#tryAcquireAsync}: an acquisition without a waiting thread (issue 13), against real
 * redis-servers: woken by another instance's release, ended by its deadline or its cancellation, exclusive under
 * contention, and leaving nothing held when Redis's reply is lost.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AsyncAcquisitionIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Duration DEADLINE = Duration.ofSeconds(20);

	@Test
	void aWaiterGetsTheLeaseWhenAHolderInAnotherInstanceReleasesIt() throws Exception {
		RedisLockService holderService = this.support.service();
		RedisLockService service = this.support.service();
		Lease held = holderService.acquire("woken", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = service
			.tryAcquireAsync(LockRequest.of("woken", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
		await().atMost(DEADLINE).until(() -> service.waitingThreads() == 1);
		String channel = service.redisKey("woken") + ":released";
		await().atMost(DEADLINE).until(() -> List.of(channel, 1L).equals(server.execute("PUBSUB", "NUMSUB", channel)));
		assertThat(waiting).isNotDone();
		long released = System.nanoTime();
		held.release();
		Lease lease = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
		// woken by the message, not by the holder's lease time (30 s)
		assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(DEADLINE);
		assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
		assertThat(service.waitingThreads()).isZero();
		lease.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(server.execute("EXISTS", service.redisKey("woken"))).isEqualTo(0L);
	}

	@Test
	void aReleaseInTheSameInstanceWakesAsyncWaitersAndAWaitingThreadAlike() throws Exception {
		sameInstanceReleases(this.support.service());
	}

	@Test
	void onTheTemplatePathAttemptsAreBlockingCallsOnTheEnginePool() throws Exception {
		this.support.paths(new EnginePaths(false, true));
		RedisLockService service = this.support.service();
		assertThat(new LeaseStore(this.support.connectionFactory(), false).acquireAsync("k", "o", 1000, "", 0, "", "")).isNull();
		sameInstanceReleases(service);
	}

	@Test
	void onTheNativePathAttemptsAreLettuceAsynchronousCalls() {
		LeaseStore store = new LeaseStore(this.support.connectionFactory(), true);
		CompletableFuture<long[]> reply = store.acquireAsync("{native}", "owner-1", 10_000, "", 0, "", "");
		assertThat(reply).isNotNull();
		assertThat(reply.join()).containsExactly(1L, Long.parseLong((String) server.execute("HGET", "{native}", "~t")),
				0L);
	}

	/** A holder of this instance releases with one async waiter and one waiting thread: both get the lease in turn. */
	private static void sameInstanceReleases(RedisLockService service) throws Exception {
		Lease held = service.acquire("local", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> async = service
			.tryAcquireAsync(LockRequest.of("local", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
		await().atMost(DEADLINE).until(() -> service.waitingThreads() == 1);
		CompletableFuture<Lease> thread = CompletableFuture
			.supplyAsync(() -> service.acquire("local", TTL, Duration.ofSeconds(60)));
		await().atMost(DEADLINE).until(() -> service.waitingThreads() == 2);
		held.releaseAsync().get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		// whichever gets it first releases it; the other then gets it
		CompletableFuture<Object> first = CompletableFuture.anyOf(async, thread);
		Object winner = first.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		Lease firstLease = (winner instanceof Optional<?> optional) ? (Lease) optional.orElseThrow() : (Lease) winner;
		assertThat(async.isDone() && thread.isDone()).isFalse();
		firstLease.releaseAsync().get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		Lease second = (winner instanceof Optional<?>) ? thread.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
				: async.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
		assertThat(second.fencingToken()).isGreaterThan(firstLease.fencingToken());
		second.release();
		assertThat(service.waitingThreads()).isZero();
	}

	@Test
	void theWaitEndsEmptyAtItsDeadlineAndAnOwnerReentersAsynchronously() throws Exception {
		RedisLockService service = this.support.service();
		LockOwner owner = LockOwner.newOwner();
		Lease held = service.acquireAsync(LockRequest.of("deadline", TTL, Duration.ZERO), owner).get(10, TimeUnit.SECONDS);
		Lease reentered = service.acquireAsync(LockRequest.of("deadline", TTL, Duration.ZERO), owner)
			.get(10, TimeUnit.SECONDS);
		assertThat(reentered.fencingToken()).isEqualTo(held.fencingToken());
		assertThat(service.activeLeases()).singleElement().satisfies(lease -> {
			assertThat(lease.holdCount()).isEqualTo(2);
			assertThat(lease.ownerThread()).isEqualTo(owner.toString());
		});
		long start = System.nanoTime();
		Optional<Lease> other = service
			.tryAcquireAsync(LockRequest.of("deadline", TTL, Duration.ofMillis(300)), LockOwner.newOwner())
			.get(10, TimeUnit.SECONDS);
		assertThat(other).isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
		assertThat(service.waitingThreads()).isZero();
		reentered.release();
		held.release();
		assertThat(server.execute("EXISTS", service.redisKey("deadline"))).isEqualTo(0L);
	}

	@Test
	void aCancelledWaitLeavesNoWaiterAndNothingInRedis() throws Exception {
		RedisLockService holderService = this.support.service();
		RedisLockService service = this.support.service();
		Lease held = holderService.acquire("cancelled", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = service
			.tryAcquireAsync(LockRequest.of("cancelled", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
		await().atMost(DEADLINE).until(() -> service.waitingThreads() == 1);
		assertThat(waiting.cancel(false)).isTrue();
		assertThat(service.waitingThreads()).isZero();
		held.release();
		await().atMost(DEADLINE).until(() -> server.execute("EXISTS", service.redisKey("cancelled")).equals(0L));
		assertThat(service.activeLeases()).isEmpty();
	}

	@Test
	void cancellingRightAfterTheCallNeverLeavesALeaseBehind() throws Exception {
		RedisLockService service = this.support.service();
		int delivered = 0;
		for (int i = 0; i < 60; i++) {
			CompletableFuture<Optional<Lease>> attempt = service
				.tryAcquireAsync(LockRequest.of("raced", TTL, Duration.ofSeconds(5)), LockOwner.newOwner());
			// cancel at varying points of the acquisition: before its call, while it is on its way, after its reply
			long cancelAt = System.nanoTime() + (i % 20) * 100_000L;
			while (System.nanoTime() - cancelAt < 0) {
				Thread.onSpinWait();
			}
			if (!attempt.cancel(false)) {
				// too late to cancel: the lease was delivered, and its holder releases it
				attempt.get(10, TimeUnit.SECONDS).orElseThrow().release();
				delivered++;
			}
			// a reply that came after the cancellation was handed to the reconciler, which deletes it
			await().atMost(Duration.ofSeconds(30))
				.until(() -> server.execute("EXISTS", service.redisKey("raced")).equals(0L));
			assertThat(service.activeLeases()).isEmpty();
			await().atMost(Duration.ofSeconds(30)).until(() -> service.waitingThreads() == 0);
		}
		System.out.println("cancelled right after the call: " + (60 - delivered) + " of 60 (the others were delivered)");
	}

	@Test
	void twoHundredAsyncAcquisitionsFromTwoInstancesLoseNoUpdate() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service());
		StringRedisTemplate redis = this.support.template();
		redis.opsForValue().set("counter", "0");
		ExecutorService work = Executors.newFixedThreadPool(4);
		try {
			List<CompletableFuture<Void>> all = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				RedisLockService service = services.get(i % 2);
				all.add(service.acquireAsync(LockRequest.of("counted", TTL, Duration.ofSeconds(120)), LockOwner.newOwner())
					.thenApplyAsync(lease -> {
						int read = Integer.parseInt(redis.opsForValue().get("counter"));
						redis.opsForValue().set("counter", Integer.toString(read + 1));
						return lease;
					}, work)
					.thenCompose(Lease::releaseAsync));
			}
			CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(150, TimeUnit.SECONDS);
		}
		finally {
			work.shutdownNow();
		}
		assertThat(redis.opsForValue().get("counter")).isEqualTo("200");
		assertThat(server.execute("EXISTS", services.get(0).redisKey("counted"))).isEqualTo(0L);
		assertThat(services).allSatisfy(service -> assertThat(service.waitingThreads()).isZero());
	}

	@Test
	void anAcquisitionWhoseReplyIsLostLeavesNothingHeldAfterTheReconciler() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService service = viaProxy
				.service(RedisLockService.builder(viaProxy.connectionFactory(Duration.ofMillis(500))));
			service.acquire("warm-up", TTL, Duration.ZERO).release();
			proxy.dropReplies();
			CompletableFuture<Optional<Lease>> attempt = service
				.tryAcquireAsync(LockRequest.of("dropped", TTL, Duration.ZERO), LockOwner.newOwner());
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> attempt.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockUnavailableException.class);
			// the script ran: Redis holds a lease this process does not know
			assertThat(server.execute("EXISTS", service.redisKey("dropped"))).isEqualTo(1L);
			proxy.heal();
			// the reconciler retries with backoff while the connection that lost replies is replaced
			await().atMost(Duration.ofSeconds(60)).until(() -> server.execute("EXISTS", service.redisKey("dropped")).equals(0L));
			assertThat(service.activeLeases()).isEmpty();
		}
	}

	@Test
	void aReentryWhoseReplyIsLostFailsAndTheLastKnownHoldStillEndsTheLease() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService service = viaProxy
				.service(RedisLockService.builder(viaProxy.connectionFactory(Duration.ofMillis(500))));
			LockOwner owner = LockOwner.newOwner();
			LockRequest request = LockRequest.of("reentered", TTL, Duration.ofSeconds(5));
			Lease outer = service.acquireAsync(request, owner).get(10, TimeUnit.SECONDS);
			proxy.dropReplies();
			CompletableFuture<Optional<Lease>> reentry = service.tryAcquireAsync(request, owner);
			// not retried until the wait's deadline, unlike a thread's re-entry: the call may have run
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> reentry.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockUnavailableException.class);
			// the script ran: Redis counts a second hold that this process does not know
			assertThat(server.execute("HGET", service.redisKey("reentered"), outer.owner())).isEqualTo("2");
			proxy.heal();
			// releasing the one hold this process knows ends the lease, whatever Redis counts
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				if (outer.isHeld()) {
					outer.releaseAsync().exceptionally((failure) -> null).get(10, TimeUnit.SECONDS);
				}
				assertThat(server.execute("EXISTS", service.redisKey("reentered"))).isEqualTo(0L);
			});
			assertThat(service.activeLeases()).isEmpty();
		}
	}

}
