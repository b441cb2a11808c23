package dev.distlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockService;
import dev.distlock.redis.LockTestSupport;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code @DistributedLock} on methods returning {@code CompletableFuture}/{@code CompletionStage}, {@code @Async} ones
 * included, in real contexts against a real Redis: the lock is held until the returned future completes.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FutureLockIntegrationTests extends RedisContextFixture {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	/** A context with the beans below, against the Redis server; subclasses change how the service acquires. */
	ApplicationContextRunner runner() {
		return DistributedLockInterceptorIntegrationTests.runner(redis).withUserConfiguration(Beans.class);
	}

	@Test
	void asyncMethodsCalledFromTwoContextsLoseNoUpdate() throws Exception {
		int calls = incrementFromTwoContexts((context) -> context.getBean(AsyncCounter.class).increment("visits"));
		assertThat(redis.execute("GET", "counter:visits")).isEqualTo(Integer.toString(calls));
		assertThat(LockTestSupport.leftKeys(redis, "lock:*")).isEmpty();
	}

	@Test
	void aLockTakenByTheCallerAroundAsyncWorkLosesNoUpdate() throws Exception {
		// the caller's thread takes the lock and hands the work to the executor: one caller thread starts one
		// invocation after the other, each with its own owner, so the second waits for the first's future
		int calls = incrementFromTwoContexts((context) -> context.getBean(CallerLockedCounter.class).increment("visits"));
		assertThat(redis.execute("GET", "counter:visits")).isEqualTo(Integer.toString(calls));
		assertThat(LockTestSupport.leftKeys(redis, "lock:*")).isEmpty();
	}

	@Test
	void withEnableAsyncTheLockIsTakenOnTheExecutorThreadAndSeenInTheBody() {
		runner().run((context) -> {
			Observed observed = context.getBean(AsyncCounter.class).observe("seen").get(10, TimeUnit.SECONDS);
			assertThat(observed.thread()).startsWith("locked-async-");
			assertThat(observed.lease()).isNotNull();
			assertThat(observed.lease().key()).isEqualTo("seen");
			assertThat(observed.lease().isHeld()).isFalse();
			assertThat(locks(context).isLocked("seen")).isFalse();
		});
	}

	@Test
	void theLeaseIsHeldUntilTheFutureCompletesAndFreeWhenTheCallerSeesTheResult() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = holder.hold("held", work);
			// the method has returned: the lease belongs to its future now
			assertThat(call).isNotDone();
			assertThat(locks(context).isLocked("held")).isTrue();
			assertThat(holder.seen()).isNotNull();
			assertThat(holder.seen().key()).isEqualTo("held");
			assertThat(holder.seen().isHeld()).isTrue();
			// the invocation's own owner, named in log lines and messages by what it runs (issue 29)
			assertThat(holder.seen().holder().ownerDescription()).isEqualTo("async FutureLockIntegrationTests.Holder.hold");
			work.complete("done");
			assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("done");
			// completed only after the release: no deadline needed
			assertThat(locks(context).isLocked("held")).isFalse();
			assertThat(holder.seen().isHeld()).isFalse();
		});
	}

	@Test
	void aCompletionStageHoldsTheLeaseToo() {
		runner().run((context) -> {
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletionStage<String> call = context.getBean(Holder.class).holdStage("stage", work);
			assertThat(locks(context).isLocked("stage")).isTrue();
			work.complete("done");
			assertThat(call.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("done");
			assertThat(locks(context).isLocked("stage")).isFalse();
		});
	}

	@Test
	void theLeaseIsReleasedWhenTheFutureFails() {
		runner().run((context) -> {
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = context.getBean(Holder.class).hold("failing", work);
			assertThat(locks(context).isLocked("failing")).isTrue();
			IllegalStateException boom = new IllegalStateException("boom");
			work.completeExceptionally(boom);
			assertThat(failureOf(call)).isSameAs(boom);
			assertThat(locks(context).isLocked("failing")).isFalse();
		});
	}

	@Test
	void cancellingTheReturnedFutureCancelsTheMethodsFutureAndReleases() {
		runner().run((context) -> {
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = context.getBean(Holder.class).hold("cancelled", work);
			assertThat(locks(context).isLocked("cancelled")).isTrue();
			assertThat(call.cancel(true)).isTrue();
			assertThat(work).isCancelled();
			await().atMost(DEADLINE).until(() -> !locks(context).isLocked("cancelled"));
		});
	}

	@Test
	void aSynchronousThrowReleasesAndPropagates() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			assertThatIllegalArgumentException().isThrownBy(() -> holder.throwing("throwing"))
				.withMessage("thrown before a future was returned");
			assertThat(locks(context).isLocked("throwing")).isFalse();
		});
	}

	@Test
	void twoInvocationsStartedByOneThreadDoNotShareTheLease() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> firstWork = new CompletableFuture<>();
			CompletableFuture<String> first = holder.hold("exclusive", firstWork);
			// same thread, same key, while the first invocation's future runs: no re-entry, the key is taken
			CompletableFuture<String> second = holder.hold("exclusive", CompletableFuture.completedFuture("second"));
			assertThat(failureOf(second)).isInstanceOf(LockAcquisitionTimeoutException.class)
				.hasMessageContaining("exclusive");
			assertThat(locks(context).holder("exclusive")).map(LockHolder::holds).contains(1);
			firstWork.complete("first");
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("first");
			CompletableFuture<String> third = holder.hold("exclusive", CompletableFuture.completedFuture("third"));
			assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo("third");
			assertThat(locks(context).isLocked("exclusive")).isFalse();
		});
	}

	@Test
	void nestedLockedCallsInTheBodyReEnter() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = holder.holdAndNest("nested", work);
			assertThat(holder.nestedSync()).isEqualTo(holder.seen().fencingToken());
			// the nested future call re-entered the outer lease and is held until its own future completes
			assertThat(locks(context).holder("nested")).map(LockHolder::holds).contains(2);
			assertThat(locks(context).holder("nested")).map(LockHolder::fencingToken).contains(holder.seen().fencingToken());
			holder.nestedWork().complete("inner");
			await().atMost(DEADLINE)
				.until(() -> locks(context).holder("nested").map(LockHolder::holds).orElse(0) == 1);
			work.complete("outer");
			assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("outer");
			assertThat(locks(context).isLocked("nested")).isFalse();
		});
	}

	@Test
	void aKeyThatIsNotFreeFailsTheFutureSkipsOrAsksTheHandlerWithoutThrowing() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			holdOnAnotherThread(holder, "busy", work);
			assertThat(failureOf(holder.hold("busy", CompletableFuture.completedFuture("x"))))
				.isInstanceOf(LockAcquisitionTimeoutException.class);
			assertThat(holder.skipping("busy").get(10, TimeUnit.SECONDS)).isEmpty();
			assertThat(holder.handled("busy").get(10, TimeUnit.SECONDS)).isEqualTo("handled busy");
			work.complete("done");
		});
	}

	@Test
	void holdAtLeastCountsFromTheAcquisitionOfAFutureMethod() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			assertThat(holder.report("daily").get(10, TimeUnit.SECONDS)).contains("ran");
			assertThat(locks(context).isLocked("daily")).isFalse();
			// the key is free, but the window of the first run is still open
			assertThat(holder.report("daily").get(10, TimeUnit.SECONDS)).isEmpty();
		});
	}

	@Test
	void aLostLeaseFailsTheFuture() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = holder.holdBriefly("fragile", work);
			Lease lease = holder.seen();
			redis.execute("DEL", "lock:{fragile}");
			await().atMost(DEADLINE).until(lease::isLost);
			work.complete("too late");
			assertThat(failureOf(call)).isInstanceOf(LockLostException.class).hasMessageContaining("fragile");
		});
	}

	@Test
	void aLostLeaseFailsTheFutureWhileItStillRunsWhenTheEngineTellsTheHolder() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = holder.holdBriefly("fragile", work);
			assumeTrue(tellsLoss(holder.seen()), "the engine does not tell of a loss");
			redis.execute("DEL", "lock:{fragile}");
			assertThat(failureOf(call)).isInstanceOf(LockLostException.class).hasMessageContaining("fragile");
			assertThat(work).isNotDone();
			work.complete("too late");
		});
	}

	@Test
	void withOnLostLeaseWarnTheLossIsLoggedAndTheResultKept() {
		runner().withPropertyValues("distlock.on-lost-lease=warn").run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> call = holder.holdBriefly("fragile", work);
			Lease lease = holder.seen();
			redis.execute("DEL", "lock:{fragile}");
			await().atMost(DEADLINE).until(lease::isLost);
			assertThat(call).isNotDone();
			work.complete("kept");
			assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("kept");
		});
	}

	@Test
	void aFailureHandlerThatThrowsFailsTheFuture() {
		runner().run((context) -> {
			Holder holder = context.getBean(Holder.class);
			CompletableFuture<String> work = new CompletableFuture<>();
			holdOnAnotherThread(holder, "refused", work);
			assertThat(failureOf(holder.refused("refused"))).isInstanceOf(IllegalStateException.class)
				.hasMessage("refused refused");
			work.complete("done");
		});
	}

	/** Another thread's invocation holds {@code key} until {@code work} completes, whatever the engine re-enters by. */
	private static void holdOnAnotherThread(Holder holder, String key, CompletableFuture<String> work) throws Exception {
		Thread other = new Thread(() -> holder.hold(key, work));
		other.start();
		other.join(10_000);
		assertThat(other.isAlive()).isFalse();
	}

	private static boolean tellsLoss(Lease lease) {
		try {
			lease.onLost((event) -> {
			});
			return true;
		}
		catch (UnsupportedOperationException ex) {
			return false;
		}
	}

	private static LockService locks(ApplicationContext context) {
		return context.getBean(LockService.class);
	}

	/** What {@code future} failed with, waited for with a deadline. */
	private static Throwable failureOf(CompletionStage<?> future) {
		try {
			future.toCompletableFuture().get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
		catch (Exception ex) {
			throw new AssertionError("The future did not fail", ex);
		}
		throw new AssertionError("The future did not fail");
	}

	private int incrementFromTwoContexts(Function<ApplicationContext, CompletableFuture<Integer>> call)
			throws Exception {
		int callers = 3;
		int callsPerCaller = 40;
		int[] total = new int[1];
		runner().run((first) -> runner().run((second) -> {
			ExecutorService pool = Executors.newFixedThreadPool(2 * callers);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<List<CompletableFuture<Integer>>>> callersDone = new ArrayList<>();
				for (ApplicationContext instance : List.of(first, second)) {
					for (int c = 0; c < callers; c++) {
						callersDone.add(pool.submit(() -> {
							start.await();
							List<CompletableFuture<Integer>> started = new ArrayList<>();
							for (int i = 0; i < callsPerCaller; i++) {
								started.add(call.apply(instance));
							}
							return started;
						}));
					}
				}
				start.countDown();
				for (Future<List<CompletableFuture<Integer>>> caller : callersDone) {
					for (CompletableFuture<Integer> increment : caller.get(150, TimeUnit.SECONDS)) {
						increment.get(150, TimeUnit.SECONDS);
					}
				}
				total[0] = 2 * callers * callsPerCaller;
			}
			finally {
				pool.shutdownNow();
			}
		}));
		return total[0];
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAsync
	static class Beans {

		@Bean
		ThreadPoolTaskExecutor taskExecutor() {
			ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
			executor.setCorePoolSize(4);
			executor.setThreadNamePrefix("locked-async-");
			return executor;
		}

		@Bean
		AsyncCounter asyncCounter(StringRedisTemplate redis) {
			return new AsyncCounter(redis);
		}

		@Bean
		AsyncWorker asyncWorker(StringRedisTemplate redis) {
			return new AsyncWorker(redis);
		}

		@Bean
		CallerLockedCounter callerLockedCounter(AsyncWorker worker) {
			return new CallerLockedCounter(worker);
		}

		@Bean
		Nested nested() {
			return new Nested();
		}

		@Bean
		Holder holder(Nested nested) {
			return new Holder(nested);
		}

		@Bean
		LockFailureHandler busyHandler() {
			return (failure) -> CompletableFuture.completedFuture("handled " + failure.key());
		}

		@Bean
		LockFailureHandler refusingHandler() {
			return (failure) -> {
				throw new IllegalStateException("refused " + failure.key());
			};
		}

	}

	/** What the body of a locked {@code @Async} method saw. */
	record Observed(String thread, @Nullable Lease lease) {
	}

	/** {@code @Async} and {@code @DistributedLock} on one method: Spring puts the async advice first. */
	public static class AsyncCounter {

		private final StringRedisTemplate redis;

		public AsyncCounter(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@Async
		@DistributedLock(key = "'counter:' + #name", ttl = "10s", waitTime = "60s")
		public CompletableFuture<Integer> increment(String name) {
			return CompletableFuture.completedFuture(readModifyWrite(this.redis, name));
		}

		@Async
		@DistributedLock(key = "#name", ttl = "10s", waitTime = "10s")
		public CompletableFuture<Observed> observe(String name) {
			return CompletableFuture
				.completedFuture(new Observed(Thread.currentThread().getName(), LockContext.current().orElse(null)));
		}

	}

	/** The work, on the executor. */
	public static class AsyncWorker {

		private final StringRedisTemplate redis;

		public AsyncWorker(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@Async
		public CompletableFuture<Integer> increment(String name) {
			return CompletableFuture.completedFuture(readModifyWrite(this.redis, name));
		}

	}

	/** The lock on the caller's thread, around work it hands to the executor. */
	public static class CallerLockedCounter {

		private final AsyncWorker worker;

		public CallerLockedCounter(AsyncWorker worker) {
			this.worker = worker;
		}

		@DistributedLock(key = "'counter:' + #name", ttl = "10s", waitTime = "60s")
		public CompletableFuture<Integer> increment(String name) {
			return this.worker.increment(name);
		}

	}

	/** A deliberately non-atomic increment: read, compute, write back. */
	static int readModifyWrite(StringRedisTemplate redis, String name) {
		String value = redis.opsForValue().get("counter:" + name);
		int next = (value == null) ? 1 : Integer.parseInt(value) + 1;
		redis.opsForValue().set("counter:" + name, Integer.toString(next));
		return next;
	}

	public static class Holder {

		private final Nested nested;

		private volatile @Nullable Lease seen;

		private volatile long nestedSync;

		private final CompletableFuture<String> nestedWork = new CompletableFuture<>();

		public Holder(Nested nested) {
			this.nested = nested;
		}

		/** {@return the lease the last body saw in its lock context} (the bean is a class proxy: fields are not) */
		public @Nullable Lease seen() {
			return this.seen;
		}

		public long nestedSync() {
			return this.nestedSync;
		}

		public CompletableFuture<String> nestedWork() {
			return this.nestedWork;
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0")
		public CompletableFuture<String> hold(String key, CompletableFuture<String> work) {
			this.seen = LockContext.current().orElseThrow();
			return work;
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0")
		public CompletionStage<String> holdStage(String key, CompletableFuture<String> work) {
			return work.minimalCompletionStage();
		}

		@DistributedLock(key = "#key", ttl = "1s", waitTime = "0")
		public CompletableFuture<String> holdBriefly(String key, CompletableFuture<String> work) {
			this.seen = LockContext.current().orElseThrow();
			return work;
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0")
		public CompletableFuture<String> throwing(String key) {
			throw new IllegalArgumentException("thrown before a future was returned");
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0")
		public CompletableFuture<String> holdAndNest(String key, CompletableFuture<String> work) {
			this.seen = LockContext.current().orElseThrow();
			this.nestedSync = this.nested.token(key);
			this.nested.hold(key, this.nestedWork);
			return work;
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0", onFailure = OnLockFailure.SKIP)
		public CompletableFuture<Optional<String>> skipping(String key) {
			return CompletableFuture.completedFuture(Optional.of("ran"));
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0", holdAtLeast = "1m", onFailure = OnLockFailure.SKIP)
		public CompletableFuture<Optional<String>> report(String key) {
			return CompletableFuture.supplyAsync(() -> Optional.of("ran"));
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0", failureHandler = "refusingHandler")
		public CompletableFuture<String> refused(String key) {
			return CompletableFuture.completedFuture("ran");
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0", failureHandler = "busyHandler")
		public CompletableFuture<String> handled(String key) {
			return CompletableFuture.completedFuture("ran");
		}

	}

	/** Locked calls nested in a locked future method's body, on the same key, each with waitTime 0. */
	public static class Nested {

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0")
		public long token(String key) {
			return LockContext.current().orElseThrow().fencingToken();
		}

		@DistributedLock(key = "#key", ttl = "10s", waitTime = "0")
		public CompletableFuture<String> hold(String key, CompletableFuture<String> work) {
			return work;
		}

	}

}
