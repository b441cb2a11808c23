package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.wait.WaiterProbe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A forced release of every lock kind (issue 25, permits of issue 30): it reports the holder(s) it deleted, read and
 * write locks and semaphores included
 * (their lease hashes carry more than hold counts), and every waiter that can enter then gets in at once, in the
 * operator's process and in others, not at the end of its wait.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ForceReleaseOfEveryKindIntegrationTests extends OneServerFixture {

	/** The holders' lease time: longer than any wait, so only a wake-up (or a wait's end) lets a waiter in. */
	private static final Duration TTL = Duration.ofSeconds(60);

	/** Long, so that a waiter that got in before it ended was woken, not let in by its last attempt. */
	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final Duration DEADLINE = Duration.ofSeconds(15);

	@Test
	void aReadLockOfTwoReadersIsReportedWithBothAndAWaitingWriterGetsIn() throws Exception {
		RedisLockService readers = this.support.service();
		RedisLockService otherReaders = this.support.service();
		RedisLockService operator = this.support.service();
		Lease first = readers.tryAcquire(LockRequest.of("report", TTL, Duration.ZERO).read()).orElseThrow();
		Lease second = otherReaders.tryAcquire(LockRequest.of("report", TTL, Duration.ZERO).read()).orElseThrow();
		Waiting writer = Waiting.start(operator, LockRequest.of("report", TTL, WAIT).write());
		await().atMost(DEADLINE).until(() -> WaiterProbe.parkedBetweenAttempts(writer.thread()));

		Optional<ForcedRelease> forced = operator.forceRelease("report");

		assertThat(forced).hasValueSatisfying(release -> {
			assertThat(release.key()).isEqualTo("report");
			assertThat(release.owners()).containsExactlyInAnyOrder(first.owner(), second.owner());
			assertThat(release.owner()).isIn(first.owner(), second.owner());
			assertThat(release.holdCount()).isEqualTo(2);
			assertThat(release.fencingToken()).isEqualTo(first.fencingToken()).isEqualTo(second.fencingToken());
		});
		writer.assertGotInBeforeItsWaitEnded();
		// each reader finds its hold gone when it releases (its renewal would find it at a third of its lease time)
		assertThatExceptionOfType(LockLostException.class).isThrownBy(first::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(second::release);
		writer.lease().release();
		assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
	}

	@Test
	void aWriteLockIsReportedWithItsWriterAndEveryWaitingReaderOfEveryProcessGetsIn() throws Exception {
		RedisLockService writerService = this.support.service();
		RedisLockService others = this.support.service();
		RedisLockService operator = this.support.service();
		Lease writer = writerService.tryAcquire(LockRequest.of("ledger", TTL, Duration.ZERO).write()).orElseThrow();
		// two readers of a process that hears the release message, two of the operator's own process
		List<Waiting> readers = List.of(Waiting.start(others, LockRequest.of("ledger", TTL, WAIT).read()),
				Waiting.start(others, LockRequest.of("ledger", TTL, WAIT).read()),
				Waiting.start(operator, LockRequest.of("ledger", TTL, WAIT).read()),
				Waiting.start(operator, LockRequest.of("ledger", TTL, WAIT).read()));
		for (Waiting reader : readers) {
			await().atMost(DEADLINE).until(() -> WaiterProbe.parkedBetweenAttempts(reader.thread()));
		}

		Optional<ForcedRelease> forced = operator.forceRelease("ledger");

		assertThat(forced).hasValueSatisfying(release -> {
			assertThat(release.owner()).isEqualTo(writer.owner());
			assertThat(release.owners()).containsExactly(writer.owner());
			assertThat(release.holdCount()).isEqualTo(1);
			assertThat(release.fencingToken()).isEqualTo(writer.fencingToken());
		});
		for (Waiting reader : readers) {
			reader.assertGotInBeforeItsWaitEnded();
		}
		// all four read at once, in a new read phase
		assertThat(this.server.execute("HGET", operator.redisKey("ledger"), "~m")).isEqualTo("r");
		assertThat(readers).allSatisfy(reader -> assertThat(reader.lease().fencingToken())
			.isGreaterThan(writer.fencingToken()));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(writer::release);
		readers.forEach(reader -> reader.lease().release());
		assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
	}

	@Test
	void aSemaphoreIsReportedWithEveryHolderAndEveryWaiterOfEveryProcessGetsAPermit() throws Exception {
		RedisLockService holders = this.support.service();
		RedisLockService others = this.support.service();
		RedisLockService operator = this.support.service();
		Lease first = holders.tryAcquire(LockRequest.of("quota", TTL, Duration.ZERO).permits(2)).orElseThrow();
		Lease second = others.tryAcquire(LockRequest.of("quota", TTL, Duration.ZERO).permits(2)).orElseThrow();
		// three waiters of a process that hears the release message (threads of their own: not the holders' owners);
		// a message that woke one waiter per process would let only one of them in before its wait ended
		List<Waiting> waiters = List.of(Waiting.start(others, LockRequest.of("quota", TTL, WAIT).permits(2)),
				Waiting.start(others, LockRequest.of("quota", TTL, WAIT).permits(2)),
				Waiting.start(others, LockRequest.of("quota", TTL, WAIT).permits(2)));
		for (Waiting waiter : waiters) {
			await().atMost(DEADLINE).until(() -> WaiterProbe.parkedBetweenAttempts(waiter.thread()));
		}

		Optional<ForcedRelease> forced = operator.forceRelease("quota");

		assertThat(forced).hasValueSatisfying(release -> {
			assertThat(release.owners()).containsExactlyInAnyOrder(first.owner(), second.owner());
			assertThat(release.holdCount()).isEqualTo(2);
		});
		// two permits came back: two of the three waiters get in at once, woken by the release, not by their deadline
		await().atMost(DEADLINE).until(() -> waiters.stream().filter(Waiting::acquired).count() == 2);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(first::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(second::release);
		List<Waiting> in = waiters.stream().filter(Waiting::acquired).toList();
		for (Waiting waiter : in) {
			waiter.assertGotInBeforeItsWaitEnded();
		}
		Waiting third = waiters.stream().filter(waiter -> !in.contains(waiter)).findFirst().orElseThrow();
		in.forEach(waiter -> waiter.lease().release());
		third.assertGotInBeforeItsWaitEnded(); // woken by their release
		third.lease().release();
		assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
	}

	@Test
	void aFairLockIsReportedAndTheOperatorsWaitingFairCallerGetsIn() throws Exception {
		RedisLockService holder = this.support.service();
		// a keepalive every 20 s: only a wake-up lets the waiter in before its wait ends
		RedisLockService operator = this.support
			.service(RedisLockService.builder(this.support.connectionFactory()).fairEntryTtl(TTL));
		Lease held = holder.tryAcquire(LockRequest.of("queue", TTL, Duration.ZERO).fair()).orElseThrow();
		long started = System.nanoTime();
		CompletableFuture<Optional<Lease>> waiting = operator
			.tryAcquireAsync(LockRequest.of("queue", TTL, WAIT).fair(), dev.distlock.core.LockOwner.newOwner());
		await().atMost(DEADLINE).until(() -> operator.fairQueueLength("queue") == 1);

		Optional<ForcedRelease> forced = operator.forceRelease("queue");

		assertThat(forced).hasValueSatisfying(release -> {
			assertThat(release.owners()).containsExactly(held.owner());
			assertThat(release.holdCount()).isEqualTo(1);
			assertThat(release.fencingToken()).isEqualTo(held.fencingToken());
		});
		Lease next = waiting.get(WAIT.toSeconds() + 15, TimeUnit.SECONDS).orElseThrow();
		assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(WAIT);
		next.release();
	}

	@Test
	void anExclusiveLockHeldTwiceIsReportedWithBothHolds() {
		RedisLockService holder = this.support.service();
		RedisLockService operator = this.support.service();
		Lease outer = holder.acquire("twice", TTL, Duration.ZERO);
		Lease inner = holder.acquire("twice", TTL, Duration.ZERO);
		assertThat(operator.forceRelease("twice")).hasValueSatisfying(release -> {
			assertThat(release.owner()).isEqualTo(outer.owner());
			assertThat(release.owners()).containsExactly(outer.owner());
			assertThat(release.holdCount()).isEqualTo(2);
			assertThat(release.fencingToken()).isEqualTo(inner.fencingToken());
		});
		assertThat(operator.forceRelease("twice")).isEmpty();
	}

	/** A blocking acquisition on a thread of its own, and when it began and ended. */
	record Waiting(Thread thread, long startedNanos, CompletableFuture<Optional<Lease>> result,
			CompletableFuture<Long> endedNanos) {

		static Waiting start(RedisLockService service, LockRequest request) {
			CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
			CompletableFuture<Long> ended = new CompletableFuture<>();
			long started = System.nanoTime();
			Thread thread = new Thread(() -> {
				try {
					Optional<Lease> lease = service.tryAcquire(request);
					ended.complete(System.nanoTime());
					result.complete(lease);
				}
				catch (Throwable ex) {
					ended.complete(System.nanoTime());
					result.completeExceptionally(ex);
				}
			}, "waiting-" + request.key());
			thread.setDaemon(true);
			thread.start();
			return new Waiting(thread, started, result, ended);
		}

		Lease lease() {
			return this.result.join().orElseThrow();
		}

		/** {@return whether it has got the lock by now} */
		boolean acquired() {
			return this.result.isDone() && !this.result.isCompletedExceptionally() && this.result.join().isPresent();
		}

		/**
		 * It got the lock, and before its wait ended: a wake-up let it in, not the last attempt it makes when the wait
		 * ends (which it sends at its deadline, {@code waitTime} after it began, or later).
		 */
		void assertGotInBeforeItsWaitEnded() throws Exception {
			assertThat(this.result.get(WAIT.toSeconds() + 15, TimeUnit.SECONDS)).as(this.thread.getName()).isPresent();
			assertThat(Duration.ofNanos(this.endedNanos.join() - this.startedNanos)).as(this.thread.getName())
				.isLessThan(WAIT);
		}

	}

}
