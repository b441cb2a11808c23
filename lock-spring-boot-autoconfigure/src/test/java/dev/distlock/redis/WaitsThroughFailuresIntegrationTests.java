package dev.distlock.redis;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A wait is a promise to keep trying until its deadline: an outage shorter than the wait (a restart, a hung server, a
 * failover) ends with the lock, not with an exception; only a wait of zero, or one whose deadline passes, fails.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WaitsThroughFailuresIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(5);

	private RedisServer server;

	private LockTestSupport support;

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

	@Test
	void aWaitThatSpansAStoppedServerEndsWithTheLock() throws Exception {
		RedisLockService service = this.support.service();
		service.acquire("warm-up", TTL, Duration.ZERO).release();
		this.server.stop();
		CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(
				() -> service.tryAcquire("outage", TTL, Duration.ofSeconds(30)));
		// several attempts fail (connection refused) meanwhile; none ends the wait
		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3)).until(() -> !waiting.isDone());
		this.server.restart();
		Lease lease = waiting.get(20, TimeUnit.SECONDS).orElseThrow();
		assertThat(this.server.execute("HGET", service.redisKey("outage"), lease.owner())).isEqualTo("1");
		lease.release();
	}

	@Test
	void aWaitThatSpansAHungServerLongerThanTheCommandTimeoutEndsWithTheLock() throws Exception {
		RedisLockService service = this.support.service();
		service.acquire("warm-up", TTL, Duration.ZERO).release();
		this.server.pause();
		CompletableFuture<Optional<Lease>> waiting;
		try {
			waiting = CompletableFuture.supplyAsync(() -> service.tryAcquire("hung", TTL, Duration.ofSeconds(30)));
			// longer than the 2 s command timeout: the first attempt has timed out, and the wait goes on
			await().during(LockTestSupport.COMMAND_TIMEOUT.plusMillis(1000)).atMost(Duration.ofSeconds(5))
				.until(() -> !waiting.isDone());
		}
		finally {
			this.server.resume();
		}
		Lease lease = waiting.get(20, TimeUnit.SECONDS).orElseThrow();
		assertThat(lease.isHeld()).isTrue();
		lease.release();
		// the attempts that timed out were discarded in Redis: nothing but the released lease was ever there
		await().atMost(Duration.ofSeconds(5)).until(() -> LockTestSupport.leftKeys(this.server).isEmpty());
	}

	@Test
	void aWaitOfZeroFailsAtOnceAndALongerWaitFailsOnlyAtItsDeadline() {
		RedisLockService service = this.support.service();
		service.acquire("warm-up", TTL, Duration.ZERO).release();
		this.server.stop();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("down", TTL, Duration.ZERO))
			.withMessageContaining("'down'");
		long start = System.nanoTime();
		Duration wait = Duration.ofMillis(1500);
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("down", TTL, wait))
			.withMessageContaining("'down'")
			.withMessageContaining("within " + wait)
			.withMessageContaining("Redis did not answer");
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(took).isGreaterThanOrEqualTo(wait);
		// room for a loaded machine's stall of 2 s; a second command timeout would not fit
		assertThat(took).isLessThan(wait.plus(LockTestSupport.COMMAND_TIMEOUT).plusMillis(2000));
	}

}
