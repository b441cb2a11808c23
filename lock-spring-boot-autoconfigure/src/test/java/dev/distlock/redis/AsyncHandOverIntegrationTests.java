package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.wait.Waiter;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Hand-overs to asynchronous acquisitions (issue 31): a release in this process hands the lease straight to a waiting
 * {@link RedisLockService#tryAcquireAsync} of the same process, as to a waiting thread, and a lease handed to an
 * acquisition that ended meanwhile (cancelled, failed) is deleted, never left to its ttl nor counted as held.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AsyncHandOverIntegrationTests extends OneServerFixture {

	/** Long enough that a lease left behind would still be in Redis when the tests look. */
	private static final Duration TTL = Duration.ofSeconds(60);

	private static final Duration DEADLINE = Duration.ofSeconds(30);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@ParameterizedTest(name = "released with {0}")
	@ValueSource(strings = { "release", "releaseAsync" })
	void aReleaseHandsTheLeaseToAnAsyncWaiterOfTheSameProcess(String release) throws Exception {
		List<Duration> waits = new CopyOnWriteArrayList<>();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.listener(new LockListener() {
				@Override
				public void acquired(LockRequest request, Lease lease, Duration waited) {
					waits.add(waited);
				}
			}));
		Lease first = service.acquire("handed", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = service
			.tryAcquireAsync(LockRequest.of("handed", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
		Waiter waiter = this.awaitWaiterBetweenAttempts(service, "handed");
		if (release.equals("release")) {
			first.release();
		}
		else {
			first.releaseAsync().get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		}
		Lease next = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
		assertThat(waiter.granted()).as("handed over, not woken to try again").isTrue();
		assertThat(next.fencingToken()).isGreaterThan(first.fencingToken());
		String key = service.redisKey("handed");
		assertThat(this.server.execute("HGET", key, next.owner())).isEqualTo("1");
		assertThat(this.server.execute("HGET", key, first.owner())).isNull();
		// the waiter's note survives a hand-over (a release would have deleted the key with it), and the lease names
		// its new holder by its label, as for a thread
		assertThat(this.server.execute("HEXISTS", key, LockScripts.WAITER_PREFIX + service.clientId())).isEqualTo(1L);
		assertThat(service.holder("handed").orElseThrow().holder()).isNotNull()
			.isEqualTo(this.server.execute("HGET", key, LockScripts.LABEL_PREFIX + next.owner()));
		assertThat(service.activeLeases()).singleElement().satisfies(s -> assertThat(s.owner()).isEqualTo(next.owner()));
		assertThat(service.waitingThreads()).isZero();
		// the listeners heard of it as of a thread's hand-over: acquired, with its wait
		assertThat(waits).hasSize(2);
		assertThat(waits.get(1)).isPositive();
		next.releaseAsync().get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(this.server.execute("EXISTS", key)).isEqualTo(0L);
		assertThat(service.activeLeases()).isEmpty();
	}

	@Test
	void handOversToAsyncWaitersKeepExclusionAndGrowingTokens() throws Exception {
		RedisLockService service = this.support.service();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		AtomicInteger inside = new AtomicInteger();
		AtomicBoolean overlap = new AtomicBoolean();
		List<CompletableFuture<Void>> chains = new java.util.ArrayList<>();
		for (int chain = 0; chain < 4; chain++) {
			CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
			for (int i = 0; i < 100; i++) {
				done = done.thenCompose(none -> service
					.acquireAsync(LockRequest.of("tokens", TTL, Duration.ofSeconds(60)), LockOwner.newOwner())
					.thenCompose(lease -> {
						if (inside.incrementAndGet() != 1) {
							overlap.set(true);
						}
						tokens.add(lease.fencingToken());
						inside.decrementAndGet();
						return lease.releaseAsync();
					}));
			}
			chains.add(done);
		}
		CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
		assertThat(overlap).isFalse();
		assertThat(tokens).hasSize(400).isSorted().doesNotHaveDuplicates();
		assertThat(LockTestSupport.leftKeys(this.server, "lock:*")).isEmpty();
		assertThat(service.activeLeases()).isEmpty();
	}

	/**
	 * The race of issue 31: the caller cancels while a holder hands the lease to its acquisition. Whichever wins, no
	 * lease stays in Redis and none is counted held: a lease granted after the cancellation is deleted. The grant comes
	 * after the cancellation in {@link #aLeaseHandedOverAfterTheCancellationIsDeleted} for sure; here it is raced, many
	 * times.
	 */
	@Test
	void cancellationsRacingHandOversLeaveNoLeaseBehind() throws Exception {
		List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					lost.add(event);
				}
			}));
		String key = service.redisKey("raced");
		int handedBeforeCancel = 0;
		int cancelled = 0;
		for (int i = 0; i < 100; i++) {
			Lease holder = service.acquire("raced", TTL, Duration.ZERO);
			CompletableFuture<Optional<Lease>> waiting = service
				.tryAcquireAsync(LockRequest.of("raced", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
			this.awaitWaiterBetweenAttempts(service, "raced");
			CyclicBarrier start = new CyclicBarrier(2);
			Future<?> release = this.threads.submit(() -> {
				start.await();
				holder.release();
				return null;
			});
			start.await();
			boolean cancel = waiting.cancel(false);
			release.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
			if (cancel) {
				cancelled++;
			}
			else {
				handedBeforeCancel++;
				waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow().release();
			}
			await("no lease of round " + i + " left in Redis").atMost(DEADLINE).pollInterval(Duration.ofMillis(2))
				.until(() -> this.server.execute("EXISTS", key).equals(0L));
			assertThat(service.activeLeases()).isEmpty();
			assertThat(service.waitingThreads()).isZero();
		}
		assertThat(cancelled + handedBeforeCancel).isEqualTo(100);
		assertThat(lost).isEmpty();
	}

	/**
	 * A hand-over slowed by latency: the caller cancels while it is on its way (the waiter reserved), so the grant
	 * comes after the acquisition ended. Its lease is deleted at once, not left for its 60 s ttl.
	 */
	@Test
	void aLeaseHandedOverAfterTheCancellationIsDeleted() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port(), Duration.ofSeconds(10))) {
			RedisLockService service = viaProxy.service();
			Lease holder = service.acquire("late", TTL, Duration.ZERO);
			CompletableFuture<Optional<Lease>> waiting = service
				.tryAcquireAsync(LockRequest.of("late", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
			Waiter waiter = this.awaitWaiterBetweenAttempts(service, "late");
			proxy.latency(Duration.ofMillis(300));
			Future<?> release = this.threads.submit(() -> {
				holder.release();
				return null;
			});
			await().atMost(DEADLINE).pollInterval(Duration.ofMillis(1)).until(waiter::reserved);
			assertThat(waiting.cancel(false)).as("cancelled while the hand-over is on its way").isTrue();
			release.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
			assertThat(waiter.granted()).as("the hand-over went through").isTrue();
			proxy.heal();
			String key = service.redisKey("late");
			await("the handed lease deleted").atMost(DEADLINE).pollInterval(Duration.ofMillis(5))
				.until(() -> this.server.execute("EXISTS", key).equals(0L));
			assertThat(service.activeLeases()).isEmpty();
			assertThat(service.waitingThreads()).isZero();
			assertThat(waiting).isCancelled();
		}
	}

	/**
	 * The wait's deadline passes while a hand-over to the acquisition is on its way: as a waiting thread, it waits the
	 * hand-over out and takes the lease, rather than ending empty and leaving it to be deleted.
	 */
	@Test
	void aHandOverUnderWayAtTheDeadlineIsTaken() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port(), Duration.ofSeconds(15))) {
			RedisLockService service = viaProxy.service();
			Lease holder = service.acquire("deadline", TTL, Duration.ZERO);
			CompletableFuture<Optional<Lease>> waiting = service
				.tryAcquireAsync(LockRequest.of("deadline", TTL, Duration.ofSeconds(4)), LockOwner.newOwner());
			Waiter waiter = this.awaitWaiterBetweenAttempts(service, "deadline");
			// the hand-over's round trip (10 s) outlasts what is left of the 4 s wait
			proxy.latency(Duration.ofSeconds(5));
			Future<?> release = this.threads.submit(() -> {
				holder.release();
				return null;
			});
			await().atMost(DEADLINE).pollInterval(Duration.ofMillis(1)).until(waiter::reserved);
			release.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
			proxy.heal();
			Lease lease = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
			assertThat(lease.fencingToken()).isGreaterThan(holder.fencingToken());
			assertThat(this.server.execute("HGET", service.redisKey("deadline"), lease.owner())).isEqualTo("1");
			lease.release();
			assertThat(this.server.execute("EXISTS", service.redisKey("deadline"))).isEqualTo(0L);
		}
	}

	/**
	 * The hand-over's reply is lost (it ran in Redis): the holder's release fails, the acquisition goes on and, when it
	 * ends without the lease, its owner id goes to the reconciler, which deletes what the hand-over gave it.
	 */
	@Test
	void aHandOverWhoseReplyIsLostLeavesNothingHeldOnceTheAcquisitionEnds() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port(), Duration.ofMillis(500))) {
			RedisLockService service = viaProxy.service();
			Lease holder = service.acquire("lost-reply", TTL, Duration.ZERO);
			CompletableFuture<Optional<Lease>> waiting = service
				.tryAcquireAsync(LockRequest.of("lost-reply", TTL, Duration.ofSeconds(60)), LockOwner.newOwner());
			Waiter waiter = this.awaitWaiterBetweenAttempts(service, "lost-reply");
			proxy.dropReplies();
			Future<?> release = this.threads.submit(() -> {
				holder.release();
				return null;
			});
			assertThat(org.assertj.core.api.Assertions.catchThrowable(
					() -> release.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)))
				.isInstanceOf(ExecutionException.class);
			assertThat(waiter.handOverUnanswered()).isTrue();
			assertThat(waiter.granted()).isFalse();
			String key = service.redisKey("lost-reply");
			// the script ran: Redis gave the waiter's owner the lease, which nobody in the process knows yet
			assertThat(this.server.execute("HLEN", key)).isNotEqualTo(0L);
			assertThat(waiting.cancel(false)).isTrue();
			proxy.heal();
			await("the lease the unanswered hand-over gave deleted").atMost(DEADLINE).pollInterval(Duration.ofMillis(5))
				.until(() -> this.server.execute("EXISTS", key).equals(0L));
			assertThat(service.activeLeases()).isEmpty();
			assertThat(service.waitingThreads()).isZero();
		}
	}

	/**
	 * Wait until the one waiter of {@code key}'s channel is between attempts, where a holder may reserve it, and done
	 * with the attempts its subscription's confirmation starts: Redis ran no script call for five polls in a row. (Were
	 * it still attempting, the release would only wake it: the tests that need a hand-over would fail, not pass.)
	 */
	private Waiter awaitWaiterBetweenAttempts(RedisLockService service, String key) {
		String channel = service.redisKey(key) + ":released";
		AtomicReference<Waiter> found = new AtomicReference<>();
		long[] calls = { -1 };
		AtomicInteger quiet = new AtomicInteger();
		await().atMost(DEADLINE).pollInterval(Duration.ofMillis(20)).until(() -> {
			long now = LockTestSupport.scriptCalls(this.server);
			quiet.set((now == calls[0]) ? quiet.get() + 1 : 0);
			calls[0] = now;
			List<Waiter> waiters = service.subscriber().waiters(channel);
			if (quiet.get() >= 5 && waiters.size() == 1 && waiters.get(0).subscribed().isDone()
					&& waiters.get(0).betweenAttempts() && !waiters.get(0).signalled) {
				found.set(waiters.get(0));
				return true;
			}
			return false;
		});
		return found.get();
	}

}
