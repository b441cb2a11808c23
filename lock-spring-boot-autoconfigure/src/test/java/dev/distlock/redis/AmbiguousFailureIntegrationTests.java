package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A command whose reply never came may still run on the server, later: the engine must not be left with a hold in
 * Redis that it does not know about. The server is paused (SIGSTOP) so that the client gives up on a script that the
 * server runs when it resumes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AmbiguousFailureIntegrationTests {

	private static final Duration LONG_TTL = Duration.ofSeconds(30);

	private RedisServer server;

	private LockTestSupport support;

	private final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

	@BeforeEach
	void start() {
		this.server = RedisServer.start();
		this.support = LockTestSupport.forServer(this.server);
	}

	@AfterEach
	void stop() {
		this.support.close();
		this.server.close();
	}

	private RedisLockService service() {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory()).listener(new LockListener() {
			@Override
			public void lost(LockLostEvent event) {
				AmbiguousFailureIntegrationTests.this.lost.add(event);
			}
		}));
	}

	/** The acquisition of {@code key} times out on a paused server, which runs the script once it resumes. */
	private void acquisitionTimesOutAndRunsLater(RedisLockService service, String key) {
		service.acquire("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
		this.server.pause();
		try {
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire(key, LONG_TTL, Duration.ofMillis(500)))
				.withMessageContaining(key);
		}
		finally {
			this.server.resume();
		}
	}

	@Test
	void theSameThreadLocksAndUnlocksAgainAfterALostReplyAndLeavesNothingBehind() {
		RedisLockService service = service();
		acquisitionTimesOutAndRunsLater(service, "orphan");
		// the defect: this acquisition re-entered the unknown hold (Redis 2, client 1), the release left 1 hold in
		// Redis that nothing renews nor releases, and other instances were kept out for the whole lease time
		Lease lease = service.acquire("orphan", LONG_TTL, Duration.ofSeconds(10));
		assertThat(this.server.execute("HGET", service.redisKey("orphan"), lease.owner())).isEqualTo("1");
		lease.release();
		assertThat(this.server.execute("EXISTS", service.redisKey("orphan"))).isEqualTo(0L);
		Optional<Lease> other = service().tryAcquire("orphan", LONG_TTL, Duration.ZERO);
		assertThat(other).isPresent();
		other.get().release();
		assertThat(this.lost).isEmpty();
	}

	@Test
	void aHoldCreatedByALateScriptIsDiscardedOnceRedisAnswersAgain() {
		RedisLockService service = service();
		acquisitionTimesOutAndRunsLater(service, "late");
		// far sooner than the 30 s lease: the engine discards what the late script created
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
			.until(() -> Long.valueOf(0).equals(this.server.execute("EXISTS", service.redisKey("late"))));
		assertThat(service.activeLeases()).isEmpty();
		Optional<Lease> other = service().tryAcquire("late", LONG_TTL, Duration.ZERO);
		assertThat(other).isPresent();
		other.get().release();
	}

	/**
	 * Issue 26: a renewal sent while the lease was valid, run by Redis in time, whose answer comes only after the
	 * lease's validity (as the client counts it) has ended. Its "yours" proves that Redis kept the lease all along (the
	 * renewal script never creates one): the lease is not lost, and nothing discards it. Before, the watchdog declared
	 * it lost at the end of its validity and the engine deleted it from Redis, while the answer was on its way.
	 * <p>
	 * Timeline with a 12 s lease and 5 s each way: a renewal sent at 4 s runs at 9 s (the lease lives until 12 s in
	 * Redis), its answer comes at 14 s, past the validity of 12 s and before the renewal's own deadline (4 s + 12 s);
	 * and so on, two seconds or more apart at each step: room for a loaded machine's stalls of 1-2 s, which can hold
	 * back the proxy's forwarding as well as the watchdog (with a 6 s lease and 2.5 s each way, steps 1 s apart).
	 */
	@Test
	void aRenewalAnsweredAfterTheValidityEndedKeepsTheLeaseItRenewedInTime() {
		Duration ttl = Duration.ofSeconds(12);
		this.server.execute("SCRIPT", "LOAD", LockScripts.RENEW_ALL.getScriptAsString());
		java.util.concurrent.atomic.AtomicInteger renewed = new java.util.concurrent.atomic.AtomicInteger();
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port(), Duration.ofSeconds(20))) {
			RedisLockService service = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory())
				.listener(new LockListener() {
					@Override
					public void lost(LockLostEvent event) {
						AmbiguousFailureIntegrationTests.this.lost.add(event);
					}

					@Override
					public void renewed(String name, boolean success) {
						if (success) {
							renewed.incrementAndGet();
						}
					}
				}));
			Lease lease = service.acquire("late-answers", ttl, Duration.ZERO);
			String key = service.redisKey("late-answers");
			proxy.latency(Duration.ofSeconds(5));
			// two renewals answered after the validity they extend had ended
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
				.until(() -> renewed.get() >= 2 || !this.lost.isEmpty());
			assertThat(this.lost).as("losses").isEmpty();
			assertThat(this.server.execute("HGET", key, lease.owner())).as("still the owner's in Redis").isEqualTo("1");
			proxy.heal();
			await().atMost(ttl).until(lease::isHeld);
			lease.release();
			assertThat(this.lost).isEmpty();
		}
	}

	@Test
	void aLeaseTheWatchdogGaveUpLeavesNoHoldBehindThoughItsRenewalsRan() {
		// renewals at 3 s, 5.75 s and 8.5 s run in Redis unanswered (2 s command timeout): given up at about 10.5 s, the
		// lease would stay in Redis until 17.5 s; the 3.5 s below leave room for a loaded machine's stalls and still
		// tell a discard from that (with 4.5 s: 2.5 s apart, and a 1.5 s bound)
		Duration ttl = Duration.ofSeconds(9);
		// as on a server that ran them before: on a fresh one EVALSHA fails (NOSCRIPT), which lost replies hide
		this.server.execute("SCRIPT", "LOAD", LockScripts.RENEW_ALL.getScriptAsString());
		this.server.execute("SCRIPT", "LOAD", ReadWriteScripts.DISCARD.getScriptAsString()); // the discard of both kinds
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService service = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory())
				.listener(new LockListener() {
					@Override
					public void lost(LockLostEvent event) {
						AmbiguousFailureIntegrationTests.this.lost.add(event);
					}
				}));
			Lease lease = service.acquire("given-up", ttl, Duration.ZERO);
			String key = service.redisKey("given-up");
			proxy.dropReplies(); // the renewals run in Redis, and the watchdog never hears that they did
			await().atMost(ttl.plusSeconds(10)).pollInterval(Duration.ofMillis(10)).until(lease::isLost);
			// the defect: each renewal that ran kept the lease in Redis for a lease time after it was sent, seconds
			// after its process had reported it lost, and nothing renewed or released it there
			await().atMost(Duration.ofMillis(3500)).pollInterval(Duration.ofMillis(10))
				.until(() -> Long.valueOf(0).equals(this.server.execute("EXISTS", key)));
			proxy.heal();
			await().atMost(Duration.ofSeconds(10)).until(() -> !this.lost.isEmpty()); // heard just after isLost
			assertThat(this.lost).singleElement()
				.satisfies(event -> assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FAILED));
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
			Optional<Lease> other = service().tryAcquire("given-up", ttl, Duration.ZERO);
			assertThat(other).isPresent();
			other.get().release();
		}
	}

	@Test
	void aReentryWhoseReplyWasLostLeavesRedisCountingWhatTheClientCounts() {
		RedisLockService service = service();
		Lease outer = service.acquire("reentered", LONG_TTL, Duration.ZERO);
		String key = service.redisKey("reentered");
		this.server.pause();
		try {
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("reentered", LONG_TTL, Duration.ofMillis(500)));
		}
		finally {
			this.server.resume();
		}
		// the late re-entry may have counted a second hold in Redis; the holder's release must end the lease anyway
		outer.release();
		assertThat(this.server.execute("EXISTS", key)).isEqualTo(0L);
		assertThat(service.activeLeases()).isEmpty();
		assertThat(this.lost).isEmpty();
	}

}
