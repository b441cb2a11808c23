package dev.distlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The scheduled-job recipe: two application contexts (two instances) each run the same {@code @Scheduled} job every
 * 20 ms on their scheduler's one thread (Boot's auto-configured scheduler, which stops before the lock service); the job takes about a millisecond. With {@code holdAtLeast = "1s"} it runs at
 * most once a second across both; without it, dozens of times a second.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ScheduledJobIntegrationTests extends RedisContextFixture {

	private static final Duration HOLD_AT_LEAST = Duration.ofSeconds(1);

	static final List<Run> runs = new CopyOnWriteArrayList<>();

	@BeforeEach
	void reset() {
		runs.clear();
	}

	@Test
	void aFastJobRunsAtMostOncePerHoldAtLeastAcrossTwoInstances() {
		ApplicationContextRunner runner = DistributedLockInterceptorIntegrationTests.runner(redis)
			.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(Scheduling.class)
			.withBean(HeldJob.class);
		runner.withPropertyValues("instance=a").run((first) -> runner.withPropertyValues("instance=b").run((second) -> {
			// five runs take four windows: at least 4 × (1s − slack)
			await().atMost(Duration.ofSeconds(30)).until(() -> runs.size() >= 5);
		}));
		List<Run> seen = new ArrayList<>(runs);
		List<Long> gaps = new ArrayList<>();
		List<Long> windowGaps = new ArrayList<>();
		for (int i = 1; i < seen.size(); i++) {
			gaps.add(TimeUnit.NANOSECONDS.toMillis(seen.get(i).startNanos() - seen.get(i - 1).startNanos()));
			windowGaps.add(TimeUnit.MICROSECONDS.toMillis(seen.get(i).windowToken() - seen.get(i - 1).windowToken()));
		}
		System.out.println("Runs " + seen.stream().map(Run::instance).toList() + ", gaps in ms between the windows "
				+ "(Redis's clock): " + windowGaps + ", between the methods' starts: " + gaps);
		// by Redis's clock (a window's fencing token is the server's TIME when it was taken): never less than holdAtLeast,
		// within the millisecond to which Redis times expiries
		for (int i = 1; i < seen.size(); i++) {
			assertThat(seen.get(i).windowToken() - seen.get(i - 1).windowToken())
				.isGreaterThanOrEqualTo(HOLD_AT_LEAST.minusMillis(1).toNanos() / 1000);
		}
		// (by this JVM's clock a run's start follows its window by a reply and a thread hand-off, which vary with the
		// machine's load: the starts are printed, not judged)
	}

	@Test
	void withoutHoldAtLeastTheSameJobRunsManyTimesASecond() {
		ApplicationContextRunner runner = DistributedLockInterceptorIntegrationTests.runner(redis)
			.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(Scheduling.class)
			.withBean(UnheldJob.class);
		runner.withPropertyValues("instance=a").run((first) -> runner.withPropertyValues("instance=b").run((second) -> {
			await().atMost(Duration.ofSeconds(30)).until(() -> runs.size() >= 10);
		}));
		// what holdAtLeast prevents: runs far closer together than a second
		List<Run> seen = new ArrayList<>(runs);
		long shortestGap = Long.MAX_VALUE;
		for (int i = 1; i < seen.size(); i++) {
			shortestGap = Math.min(shortestGap, seen.get(i).startNanos() - seen.get(i - 1).startNanos());
		}
		assertThat(Duration.ofNanos(shortestGap)).isLessThan(Duration.ofMillis(500));
	}

	@Test
	void theWindowExpiresByItselfAndTheProcessForgetsIt() {
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withBean(CalledJob.class)
			.run((context) -> {
				CalledJob job = context.getBean(CalledJob.class);
				LockOperatorView view = context.getBean(LockOperatorView.class);
				assertThat(job.run()).isTrue();
				// the same thread again, at once: the window keeps it out (it is not re-entered)
				assertThat(job.run()).isFalse();
				assertThat(redis.execute("EXISTS", "lock:{nightly}")).isEqualTo(0L);
				assertThat(redis.execute("EXISTS", "lock:{nightly:held-at-least}")).isEqualTo(1L);
				assertThat(view.activeLeases()).singleElement()
					.satisfies((lease) -> assertThat(lease.key()).isEqualTo("nightly:held-at-least"));
				// a nested call on the key takes no window of its own
				await().atMost(Duration.ofSeconds(10)).until(job::run);
				await().atMost(Duration.ofSeconds(10)).until(job::runNested);
				assertThat(job.nestedRuns()).isEqualTo(1);
				await().atMost(Duration.ofSeconds(10)).until(() -> view.activeLeases().isEmpty()
						&& Long.valueOf(0).equals(redis.execute("EXISTS", "lock:{nightly:held-at-least}")));
			});
	}

	record Run(String instance, long startNanos, long durationNanos, long windowToken) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class Scheduling {

	}

	public static class HeldJob {

		private final String instance;

		private final LockService lockService;

		public HeldJob(Environment environment, LockService lockService) {
			this.instance = environment.getRequiredProperty("instance");
			this.lockService = lockService;
		}

		@Scheduled(fixedRate = 20)
		@DistributedLock(key = "'report'", waitTime = "0", onFailure = OnLockFailure.SKIP, holdAtLeast = "1s")
		public void report() throws InterruptedException {
			long start = System.nanoTime();
			long windowToken = this.lockService.holder("report" + HoldAtLeastWindows.SUFFIX).orElseThrow().fencingToken();
			new CountDownLatch(1).await(1, TimeUnit.MILLISECONDS); // the job's work: about a millisecond
			runs.add(new Run(this.instance, start, System.nanoTime() - start, windowToken));
		}

	}

	public static class UnheldJob {

		private final String instance;

		public UnheldJob(Environment environment) {
			this.instance = environment.getRequiredProperty("instance");
		}

		@Scheduled(fixedRate = 20)
		@DistributedLock(key = "'report'", waitTime = "0", onFailure = OnLockFailure.SKIP)
		public void report() throws InterruptedException {
			long start = System.nanoTime();
			new CountDownLatch(1).await(1, TimeUnit.MILLISECONDS);
			runs.add(new Run(this.instance, start, System.nanoTime() - start, 0));
		}

	}

	public static class CalledJob {

		private final AtomicInteger nestedRan = new AtomicInteger();

		private CalledJob self;

		@Autowired
		void setSelf(@Lazy CalledJob self) {
			this.self = self;
		}

		public int nestedRuns() {
			return this.nestedRan.get();
		}

		@DistributedLock(key = "'nightly'", waitTime = "0", onFailure = OnLockFailure.SKIP, holdAtLeast = "3s")
		public boolean run() {
			return true;
		}

		@DistributedLock(key = "'nightly'", waitTime = "0", onFailure = OnLockFailure.SKIP, holdAtLeast = "3s")
		public boolean runNested() {
			return this.self.inner();
		}

		@DistributedLock(key = "'nightly'", waitTime = "0", onFailure = OnLockFailure.SKIP, holdAtLeast = "3s")
		public boolean inner() {
			this.nestedRan.incrementAndGet();
			return true;
		}

	}

}
