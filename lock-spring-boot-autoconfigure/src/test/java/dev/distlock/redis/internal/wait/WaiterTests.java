package dev.distlock.redis.internal.wait;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The hand-over state machine of {@link Waiter}, without Redis: every transition, and the races between a waiter's
 * thread and a holder's thread. The invariant under test: a lease granted to a waiter always finds that waiter's
 * thread, and a waiter's own attempt never overlaps a hand-over to it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaiterTests {

	private final ExecutorService holder = Executors.newSingleThreadExecutor();

	@AfterEach
	void stop() {
		this.holder.shutdownNow();
	}

	private static Waiter waiter() {
		return waiter(Thread.currentThread(), new CompletableFuture<>());
	}

	private static Waiter waiter(Thread thread, CompletableFuture<Void> subscribed) {
		return new Waiter(new ReleaseChannel("lock:{k}:released"), thread, subscribed, "client:1:1", "k", 1000, "");
	}

	private static long soon(Duration duration) {
		return System.nanoTime() + duration.toNanos();
	}

	@Test
	void anAttemptingWaiterCannotBeReservedUntilItsAttemptEnds() {
		Waiter waiter = waiter();
		assertThat(waiter.startAttempt()).isTrue();
		assertThat(waiter.reserve()).as("a hand-over during the waiter's own attempt").isFalse();
		assertThat(waiter.startAttempt()).as("one attempt at a time").isFalse();
		waiter.endAttempt();
		assertThat(waiter.reserve()).isTrue();
	}

	@Test
	void aReservedWaiterCannotAttemptAndIsGrantedTheLease() throws Exception {
		Waiter waiter = waiter();
		assertThat(waiter.reserve()).isTrue();
		assertThat(waiter.reserve()).as("reserved once").isFalse();
		assertThat(waiter.startAttempt()).isFalse();
		this.holder.submit(() -> waiter.grant(42, 7, 2)).get();
		assertThat(waiter.await(soon(Duration.ofSeconds(5)))).as("the grant wakes the waiter").isTrue();
		assertThat(waiter.startAttempt()).isFalse();
		assertThat(waiter.handedOver()).isTrue();
		assertThat(waiter.grantedToken()).isEqualTo(42);
		assertThat(waiter.grantedAtNanos()).isEqualTo(7);
		assertThat(waiter.grantedHandOvers()).isEqualTo(2);
		assertThat(waiter.leave()).as("a granted waiter owns the lease").isTrue();
	}

	@Test
	void aRevertedReservationLetsTheWaiterTryAgainAtOnce() throws Exception {
		Waiter waiter = waiter();
		assertThat(waiter.reserve()).isTrue();
		this.holder.submit(waiter::revert).get();
		assertThat(waiter.await(soon(Duration.ofSeconds(5)))).as("revert wakes the waiter").isTrue();
		assertThat(waiter.handedOver()).isFalse();
		assertThat(waiter.startAttempt()).isTrue();
	}

	@Test
	void aWaiterThatLeftTakesNoHandOver() {
		Waiter waiter = waiter();
		assertThat(waiter.leave()).isFalse();
		assertThat(waiter.reserve()).isFalse();
		assertThat(waiter.startAttempt()).isFalse();
		assertThat(waiter.leave()).isFalse();
	}

	@Test
	void leavingWhileReservedWaitsForTheHolderAndTakesAGrantedLease() throws Exception {
		Waiter waiter = waiter();
		assertThat(waiter.reserve()).isTrue();
		CompletableFuture<Boolean> left = new CompletableFuture<>();
		Thread leaving = new Thread(() -> left.complete(waiter.leave()));
		leaving.start();
		// the holder has not decided yet: leave() must wait for it rather than abandon a lease about to be granted
		await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2)).until(() -> !left.isDone());
		waiter.grant(9, 0, 1);
		assertThat(left.get(5, TimeUnit.SECONDS)).isTrue();
	}

	@Test
	void leavingWhileReservedAfterARevertLeavesEmptyHanded() throws Exception {
		Waiter waiter = waiter();
		assertThat(waiter.reserve()).isTrue();
		CompletableFuture<Boolean> left = new CompletableFuture<>();
		Thread leaving = new Thread(() -> left.complete(waiter.leave()));
		leaving.start();
		await().during(Duration.ofMillis(100)).atMost(Duration.ofSeconds(2)).until(() -> !left.isDone());
		waiter.revert();
		assertThat(left.get(5, TimeUnit.SECONDS)).isFalse();
		assertThat(waiter.reserve()).as("it left").isFalse();
	}

	@Test
	void aWakeUpBeforeTheWaitIsNotLostAndIsConsumedOnce() throws Exception {
		Waiter waiter = waiter();
		waiter.signal();
		assertThat(waiter.await(soon(Duration.ofSeconds(5)))).isTrue();
		long start = System.nanoTime();
		assertThat(waiter.await(soon(Duration.ofMillis(50)))).as("consumed").isFalse();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
	}

	@Test
	void anInterruptEndsAWaitButNotAPendingHandOver() throws Exception {
		Waiter waiter = waiter();
		Thread.currentThread().interrupt();
		assertThatExceptionOfType(InterruptedException.class).isThrownBy(() -> waiter.await(soon(Duration.ofSeconds(5))));

		assertThat(waiter.reserve()).isTrue();
		Thread self = Thread.currentThread();
		self.interrupt();
		Future<?> grant = this.holder.submit(() -> {
			// grant only once the waiter is parked in handedOver(), its interrupt already seen
			await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5))
				.until(() -> self.getState() == Thread.State.TIMED_WAITING && !self.isInterrupted());
			waiter.grant(5, 0, 1);
		});
		// a granted lease must find its holder: the interrupt is kept for the caller, not obeyed here
		assertThat(waiter.handedOver()).isTrue();
		assertThat(Thread.interrupted()).isTrue();
		grant.get();
	}

	@Test
	void awaitingTheSubscriptionEndsWhenItIsConfirmedWhenWokenOrAtTheDeadline() throws Exception {
		CompletableFuture<Void> subscribed = new CompletableFuture<>();
		Waiter waiter = waiter(Thread.currentThread(), subscribed);
		assertThat(waiter.awaitSubscribed(soon(Duration.ofMillis(50)))).as("deadline").isFalse();
		waiter.signal();
		assertThat(waiter.awaitSubscribed(soon(Duration.ofSeconds(5)))).as("woken: the wake-up is left for await")
			.isFalse();
		assertThat(waiter.await(soon(Duration.ofMillis(10)))).isTrue();
		this.holder.submit(() -> subscribed.complete(null)).get();
		assertThat(waiter.awaitSubscribed(soon(Duration.ofSeconds(5)))).isTrue();
		Waiter failed = waiter(Thread.currentThread(), CompletableFuture.failedFuture(new IllegalStateException()));
		assertThat(failed.awaitSubscribed(soon(Duration.ofSeconds(5)))).as("a failed subscription").isFalse();
	}

	@Test
	void anUnansweredHandOverIsRememberedForTheWaitersAcquisition() {
		Waiter waiter = waiter();
		assertThat(waiter.handOverUnanswered()).isFalse();
		assertThat(waiter.reserve()).isTrue();
		waiter.markHandOverUnanswered();
		waiter.revert();
		assertThat(waiter.handOverUnanswered()).isTrue();
	}

	/** A holder's reservation and the waiter's own attempt race from WAITING: exactly one of them wins, every time. */
	@Test
	void aReservationAndAnAttemptNeverBothSucceed() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			for (int i = 0; i < 20_000; i++) {
				Waiter waiter = waiter();
				CyclicBarrier start = new CyclicBarrier(2);
				Future<Boolean> reserved = threads.submit(() -> {
					start.await();
					return waiter.reserve();
				});
				Future<Boolean> attempting = threads.submit(() -> {
					start.await();
					return waiter.startAttempt();
				});
				assertThat(reserved.get() ^ attempting.get()).as("round %d: exactly one wins", i).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	/**
	 * A holder grants or reverts while the waiter leaves: the waiter takes the lease exactly when it was granted, so a
	 * granted lease is never left without a thread, and a reverted one never taken.
	 */
	@Test
	void aGrantOrRevertRacingWithLeaveIsSeenByTheWaiterExactlyWhenItHappened() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			for (int i = 0; i < 5_000; i++) {
				boolean grant = (i % 2) == 0;
				CompletableFuture<Thread> waiterThread = new CompletableFuture<>();
				AtomicBoolean reservedFirst = new AtomicBoolean();
				CountDownLatch ready = new CountDownLatch(1);
				Waiter[] holder = new Waiter[1];
				Future<Boolean> left = threads.submit(() -> {
					Waiter waiter = waiter(Thread.currentThread(), new CompletableFuture<>());
					holder[0] = waiter;
					reservedFirst.set(waiter.reserve());
					ready.countDown();
					waiterThread.complete(Thread.currentThread());
					return waiter.leave();
				});
				Future<?> decided = threads.submit(() -> {
					ready.await();
					if (grant) {
						holder[0].grant(1, 0, 1);
					}
					else {
						holder[0].revert();
					}
					return null;
				});
				decided.get(10, TimeUnit.SECONDS);
				assertThat(reservedFirst).isTrue();
				assertThat(left.get(10, TimeUnit.SECONDS)).as("round %d (%s)", i, grant ? "grant" : "revert")
					.isEqualTo(grant);
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	/** An asynchronous waiter (issue 31): its wake-ups counted, taking hand-overs if {@code takesHandOvers}. */
	private static Waiter asyncWaiter(AtomicInteger wakeUps, boolean takesHandOvers) {
		return new Waiter(new ReleaseChannel("lock:{k}:released"), wakeUps::incrementAndGet,
				CompletableFuture.completedFuture(null), "client:1:2", "k", 1000, "label", takesHandOvers);
	}

	@Test
	void anAsyncWaiterIsReservedBetweenAttemptsAndWokenByTheGrant() {
		AtomicInteger wakeUps = new AtomicInteger();
		Waiter waiter = asyncWaiter(wakeUps, true);
		assertThat(waiter.startAttempt()).isTrue();
		assertThat(waiter.reserve()).as("a hand-over during its own attempt").isFalse();
		waiter.endAttempt();
		assertThat(waiter.betweenAttempts()).isTrue();
		assertThat(waiter.reserve()).isTrue();
		assertThat(waiter.reserved()).isTrue();
		assertThat(waiter.startAttempt()).as("no attempt while reserved").isFalse();
		assertThat(waiter.tryLeave()).as("an asynchronous waiter does not leave while reserved").isFalse();
		waiter.grant(42, 7, 1);
		assertThat(wakeUps).as("the grant wakes it, on the holder's thread, through its wake-up action").hasValue(1);
		assertThat(waiter.granted()).isTrue();
		assertThat(waiter.tryLeave()).as("a granted lease must be taken or discarded").isFalse();
		assertThat(waiter.label).isEqualTo("label");
	}

	@Test
	void anAsyncWaiterLeavesWithoutWaitingOnceAHandOverToItIsReverted() {
		AtomicInteger wakeUps = new AtomicInteger();
		Waiter waiter = asyncWaiter(wakeUps, true);
		assertThat(waiter.reserve()).isTrue();
		assertThat(waiter.tryLeave()).isFalse();
		waiter.markHandOverUnanswered();
		waiter.revert();
		assertThat(wakeUps).as("the revert wakes it").hasValue(1);
		assertThat(waiter.handOverUnanswered()).isTrue();
		assertThat(waiter.tryLeave()).isTrue();
		assertThat(waiter.tryLeave()).as("left, for good").isTrue();
		assertThat(waiter.reserve()).isFalse();
		assertThat(waiter.startAttempt()).isFalse();
	}

	@Test
	void anAsyncWaiterOfAKindWithoutHandOversIsNeverReserved() {
		Waiter waiter = asyncWaiter(new AtomicInteger(), false);
		assertThat(waiter.reserve()).isFalse();
		assertThat(waiter.startAttempt()).isTrue();
	}

}
