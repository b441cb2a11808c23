package dev.distlock.redis.internal.store;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.blockhound.BlockingCalls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link ReplyDeadlines} on non-blocking threads, under BlockHound (the {@code blockhound} surefire execution): a reply
 * completed in time cancels its deadline without taking a lock, however busy other threads keep the JDK's timer queue
 * ({@code orTimeout} took that queue's lock on the completing thread, which is how a reply completed on Lettuce's event
 * loop blocked it); a reply that does not come fails with a {@link TimeoutException}, as {@code orTimeout}'s did.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplyDeadlinesBlockHoundTests {

	@BeforeAll
	static void install() {
		BlockingCalls.install();
	}

	@AfterEach
	void noBlockingCall() {
		BlockingCalls.clear();
	}

	@Test
	void repliesCompletedOnNonBlockingThreadsTakeNoLockWhileOthersKeepTheJdkTimerQueueBusy() throws Exception {
		AtomicBoolean contending = new AtomicBoolean(true);
		CountDownLatch stopped = new CountDownLatch(2);
		for (int i = 0; i < 2; i++) {
			// the JDK timer queue that orTimeout shares, kept busy: each of these takes and releases its lock twice
			Thread contender = new Thread(() -> {
				while (contending.get()) {
					new CompletableFuture<>().orTimeout(1, TimeUnit.DAYS).complete(1);
				}
				stopped.countDown();
			});
			contender.setDaemon(true);
			contender.start();
		}
		try {
			// every completion on a Reactor parallel thread, which BlockHound watches
			List<Long> completed = Flux.range(0, 4)
				.parallel(4)
				.runOn(Schedulers.parallel())
				.map((slice) -> {
					long count = 0;
					for (int j = 0; j < 20_000; j++) {
						CompletableFuture<Integer> reply = ReplyDeadlines.within(new CompletableFuture<>(),
								TimeUnit.SECONDS.toNanos(30));
						if (reply.complete(j)) {
							count++;
						}
					}
					return count;
				})
				.sequential()
				.collectList()
				.block(Duration.ofSeconds(60));
			assertThat(completed).containsOnly(20_000L);
			assertThat(BlockingCalls.recorded()).as("blocking calls on non-blocking threads").isEmpty();
		}
		finally {
			contending.set(false);
			stopped.await(10, TimeUnit.SECONDS);
		}
	}

	@Test
	void aReplyThatDoesNotComeFailsWithATimeout() {
		CompletableFuture<Integer> reply = ReplyDeadlines.within(new CompletableFuture<>(),
				TimeUnit.MILLISECONDS.toNanos(50));
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> reply.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(TimeoutException.class);
		// completed already: the deadline is not set at all
		CompletableFuture<Integer> done = CompletableFuture.completedFuture(1);
		assertThat(ReplyDeadlines.within(done, 0)).isSameAs(done).isCompletedWithValue(1);
	}

}
