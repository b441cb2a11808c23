package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@link Lease#onLost} and {@link Lease#releaseAsync()} of the Redis engine (issue 13), against a real redis-server:
 * a loss runs each hold's action exactly once on an engine thread, a released hold's action never; an asynchronous
 * release runs on an engine thread with the outcome of a blocking one.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LeaseLossAndAsyncReleaseIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private final List<String> releasedOn = new CopyOnWriteArrayList<>();

	private RedisLockService service() {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory()).listener(new LockListener() {
			@Override
			public void released(Lease lease, Duration held, boolean success) {
				LeaseLossAndAsyncReleaseIntegrationTests.this.releasedOn.add(Thread.currentThread().getName());
			}
		}));
	}

	@Test
	void aLeaseFoundGoneByTheWatchdogRunsEachActionOnceOnAnEngineThread() {
		RedisLockService service = service();
		Lease lease = service.acquire("lost", Duration.ofMillis(600), Duration.ZERO); // auto-renewed
		List<String> ranOn = new CopyOnWriteArrayList<>();
		List<LockLostEvent> events = new CopyOnWriteArrayList<>();
		lease.onLost(event -> {
			ranOn.add(Thread.currentThread().getName());
			events.add(event);
		});
		server.execute("DEL", service.redisKey("lost"));
		await().atMost(DEADLINE).until(() -> events.size() == 1);
		assertThat(events.get(0).fencingToken()).isEqualTo(lease.fencingToken());
		assertThat(ranOn.get(0)).contains("-events").doesNotContain("watchdog");
		assertThat(lease.isLost()).isTrue();
		// registering after the loss runs at once; the loss is not announced again
		List<LockLostEvent> late = new CopyOnWriteArrayList<>();
		lease.onLost(late::add);
		assertThat(late).containsExactly(events.get(0));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(events).hasSize(1);
	}

	@Test
	void aForcedReleaseFoundByTheHolderRunsTheActionOnceAndAReleasedHoldsActionNever() throws Exception {
		RedisLockService service = service();
		Lease outer = service.acquire("forced", TTL, Duration.ZERO);
		Lease inner = service.acquire("forced", TTL, Duration.ZERO);
		List<LockLostEvent> outerLost = new CopyOnWriteArrayList<>();
		List<LockLostEvent> innerLost = new CopyOnWriteArrayList<>();
		outer.onLost(outerLost::add);
		inner.onLost(innerLost::add);
		inner.release();
		assertThat(service.forceRelease("forced")).isPresent();
		assertThat(outer.isOwned()).isFalse();
		assertThat(outer.isOwned()).isFalse();
		await().atMost(DEADLINE).until(() -> outerLost.size() == 1);
		assertThat(innerLost).isEmpty();
		CompletableFuture<Void> release = outer.releaseAsync();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> release.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(LockLostException.class);
		assertThat(outerLost).hasSize(1);
	}

	@Test
	void anActionOfAHoldReleasedBeforeTheLossNeverRuns() {
		RedisLockService service = service();
		// a long lease: released at once, it must not run out first however the machine stalls (its release would fail)
		Lease lease = service.acquire("released", TTL, Duration.ZERO);
		List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
		lease.onLost(lost::add);
		lease.release();
		lease.onLost(lost::add); // after the release: never runs either
		Lease next = service.acquire("released", Duration.ofMillis(600), Duration.ZERO);
		List<LockLostEvent> nextLost = new CopyOnWriteArrayList<>();
		next.onLost(nextLost::add);
		server.execute("DEL", service.redisKey("released"));
		await().atMost(DEADLINE).until(() -> nextLost.size() == 1);
		assertThat(lost).isEmpty();
	}

	@Test
	void releaseAsyncReleasesOnAnEngineThreadWithTheOutcomeOfRelease() throws Exception {
		RedisLockService service = service();
		Lease lease = service.acquire("async", TTL, Duration.ZERO);
		lease.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(server.execute("EXISTS", service.redisKey("async"))).isEqualTo(0L);
		assertThat(this.releasedOn).singleElement().satisfies(name -> assertThat(name).contains("-async"));
		assertThat(lease.isHeld()).isFalse();
		assertThat(service.activeLeases()).isEmpty();
		CompletableFuture<Void> again = lease.releaseAsync();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> again.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(LockNotOwnedException.class);
		// re-entered: the first asynchronous release leaves the lease held once
		Lease outer = service.acquire("async", TTL, Duration.ZERO);
		Lease inner = service.acquire("async", TTL, Duration.ZERO);
		inner.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(server.execute("HGET", service.redisKey("async"), outer.owner())).isEqualTo("1");
		outer.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(server.execute("EXISTS", service.redisKey("async"))).isEqualTo(0L);
	}

	@Test
	void anUnansweredAsyncReleaseCountsTheHoldReleasedAndLeavesNothingHeldOnceRedisAnswers() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService service = viaProxy
				.service(RedisLockService.builder(viaProxy.connectionFactory(Duration.ofMillis(500))));
			Lease lease = service.acquire("unanswered", TTL, Duration.ZERO);
			proxy.dropReplies();
			CompletableFuture<Void> release = lease.releaseAsync();
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> release.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(LockUnavailableException.class);
			assertThat(lease.isHeld()).isFalse();
			assertThat(service.activeLeases()).isEmpty();
			proxy.heal();
			await().atMost(Duration.ofSeconds(60)).until(() -> server.execute("EXISTS", service.redisKey("unanswered")).equals(0L));
		}
	}

}
