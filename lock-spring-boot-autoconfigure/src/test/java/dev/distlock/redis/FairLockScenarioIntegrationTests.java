package dev.distlock.redis;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redisson's fair-lock failures (issue 15) as scenarios our fair lock must pass: dead waiters left in the queue, live
 * waiters dropped from it, waits past their deadline, a queue frozen by hundreds of threads, a waiter blocked by an
 * expired holder, and FIFO order across processes. Each scenario names the Redisson issues it reproduces and what
 * would fail, and checks that nothing is left in Redis afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FairLockScenarioIntegrationTests extends OneServerFixture {

	/** The mode the scenarios run in: FAIR; {@code -Ddistlock.test.scenario-mode=EXCLUSIVE} to debug the harness. */
	static final LockMode MODE = LockMode.valueOf(System.getProperty("distlock.test.scenario-mode", "FAIR"));

	/**
	 * How long a queue entry outlives its waiter's last refresh in these scenarios (the fair lock's setting). A waiter
	 * refreshes its entry every third of that, so a live waiter stalled for two thirds of it loses its place: 6 s
	 * leaves room for the stalls of a loaded 2-core machine (1-2 s), which a 1 s entry did not (issue 32).
	 */
	static final Duration ENTRY_TTL = Duration.ofSeconds(6);

	/**
	 * Room for a loaded 2-core machine on top of every bound: its stalls last 1-2 s. Each failure these bounds catch
	 * costs far more: a queue entry's ttl (6 s) or a whole wait (20 s and more).
	 */
	private static final Duration MARGIN = Duration.ofSeconds(5);

	private static final Duration LONG = Duration.ofSeconds(30);

	private final List<Process> processes = new ArrayList<>();

	/** Threads an earlier test of this JVM left deadlocked: not this scenario's. */
	private Set<Long> deadlockedBefore = Set.of();

	@BeforeEach
	void noteDeadlocks() {
		this.deadlockedBefore = EngineDeadlocks.ids();
	}

	@AfterEach
	void killProcesses() {
		this.processes.forEach(Process::destroyForcibly);
	}

	/**
	 * Close the services with a deadline: an engine whose threads deadlocked would hang the client's shutdown, and
	 * with it the build; fail instead, naming the deadlocked threads.
	 */
	@Override
	@AfterEach
	protected void closeSupport() {
		String deadlocked = EngineDeadlocks.describe(this.deadlockedBefore);
		Thread closing = new Thread(super::closeSupport, "close-scenario-services");
		closing.setDaemon(true);
		closing.start();
		try {
			closing.join(TimeUnit.SECONDS.toMillis(30));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		assertThat(deadlocked).as("deadlocked threads after the scenario").isEmpty();
		assertThat(closing.isAlive()).as("closing the services took over 30 s; deadlocked threads: %s",
				EngineDeadlocks.describe(this.deadlockedBefore)).isFalse();
	}

	static LockRequest request(String key, Duration ttl, Duration wait) {
		return LockRequest.of(key, ttl, wait).withMode(MODE);
	}

	static RedisLockServiceBuilder fairBuilder(RedisLockServiceBuilder builder, Duration entryTtl) {
		return builder.fairEntryTtl(entryTtl);
	}

	private RedisLockService service() {
		return service(ENTRY_TTL);
	}

	private RedisLockService service(Duration entryTtl) {
		return this.support.service(fairBuilder(RedisLockService.builder(this.support.connectionFactory()), entryTtl));
	}

	/** The fair lock's queue of a key. */
	static String queueKey(RedisLockService service, String key) {
		return service.redisKey(key) + ":q";
	}

	/**
	 * Redisson #1104, #3730: a waiter whose process dies stays in the queue and blocks every waiter behind it (until a
	 * long thread-wait timeout, or for ever). A child JVM queues behind a held lock and is killed; a live waiter of
	 * this process queues behind it; on release the live waiter must get the lock within the dead entry's ttl (and a
	 * margin), and nothing in Redis may name the dead process afterwards.
	 */
	@Test
	void aKilledWaitersEntryDoesNotBlockTheQueue(@TempDir Path dir) throws Exception {
		// the dead entry must still be queued when the lock is released, after the kill and the live waiter's queueing:
		// 10 s leaves room for a loaded machine's stalls in between
		Duration deadEntryTtl = Duration.ofSeconds(10);
		FairQueueProbe probe = new FairQueueProbe(this.server);
		RedisLockService holderService = service();
		Lease held = holderService.acquire(request("dead-waiter", LONG, Duration.ZERO));
		Path log = dir.resolve("queue.log");
		Process child = startJvm(log, "queue", Integer.toString(this.server.port()), "dead-waiter", "60000",
				Long.toString(deadEntryTtl.toMillis()));
		String dead = await().atMost(Duration.ofSeconds(60)).until(() -> FairLockJvmWorker.clientId(log), id -> id != null);
		await().atMost(Duration.ofSeconds(10)).until(() -> !probe.mentioning(dead).isEmpty());
		child.destroyForcibly();
		assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
		RedisLockService live = service();
		CompletableFuture<Optional<Lease>> waiter = CompletableFuture
			.supplyAsync(() -> live.tryAcquire(request("dead-waiter", LONG, Duration.ofSeconds(60))));
		await().atMost(Duration.ofSeconds(10)).until(() -> !probe.mentioning(live.clientId()).isEmpty());
		if (MODE == LockMode.FAIR) {
			assertThat(probe.mentioning(dead)).as("the dead waiter is still queued when the lock is released")
				.containsKey(queueKey(live, "dead-waiter"));
		}
		long released = System.nanoTime();
		held.release();
		Lease lease = waiter.get(30, TimeUnit.SECONDS).orElseThrow();
		Duration waited = Duration.ofNanos(System.nanoTime() - released);
		report("killed waiter: the live waiter got the lock %d ms after the release (dead entry ttl %d ms)", waited.toMillis(),
				deadEntryTtl.toMillis());
		assertThat(waited).isLessThan(deadEntryTtl.plus(MARGIN));
		assertThat(probe.mentioning(dead)).as("what names the dead process").isEmpty();
		lease.release();
		assertNothingLeft();
	}

	/**
	 * Redisson #3004, #2883: with a short wait, fair {@code tryLock} calls waited far past their wait time (a thread's
	 * queue entry outliving its attempt pushed the next attempts' timeouts back) or failed with errors. Three threads,
	 * each 100 times: acquire waiting 500 ms with a 30 s lease, a short critical section (a read-modify-write counter
	 * in Redis), release. No call may wait past its deadline plus a margin, none may fail other than by timing out,
	 * the sections never overlap, and at the end the lock is free and nothing is left in Redis.
	 */
	@Test
	void shortWaitsInALoopKeepTheirDeadlinesAndLeaveNothingBehind() throws Exception {
		RedisLockService service = service();
		StringRedisTemplate redis = this.support.template();
		Duration wait = Duration.ofMillis(500);
		AtomicInteger inside = new AtomicInteger();
		AtomicBoolean overlap = new AtomicBoolean();
		AtomicInteger acquired = new AtomicInteger();
		List<Duration> late = new java.util.concurrent.CopyOnWriteArrayList<>();
		AtomicLong longest = new AtomicLong();
		EngineDeadlocks.run(3, 100, Duration.ofSeconds(30), thread -> {
			long start = System.nanoTime();
			Optional<Lease> lease = service.tryAcquire(request("short-waits", LONG, wait));
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			longest.accumulateAndGet(took.toMillis(), Math::max);
			if (took.compareTo(wait.plus(MARGIN)) > 0) {
				late.add(took);
			}
			if (lease.isPresent()) {
				try (Lease held = lease.get()) {
					if (inside.incrementAndGet() != 1) {
						overlap.set(true);
					}
					String value = redis.opsForValue().get("short-waits:counter");
					redis.opsForValue().set("short-waits:counter", Long.toString((value != null) ? Long.parseLong(value) + 1 : 1));
					acquired.incrementAndGet();
					inside.decrementAndGet();
				}
			}
		});
		report("short waits: %d of 300 acquired, longest call %d ms (wait %d ms)", acquired.get(), longest.get(),
				wait.toMillis());
		assertThat(late).as("calls that waited past their deadline plus %s", MARGIN).isEmpty();
		assertThat(overlap).isFalse();
		assertThat(acquired.get()).isPositive();
		assertThat(redis.opsForValue().get("short-waits:counter")).isEqualTo(Integer.toString(acquired.get()));
		redis.delete("short-waits:counter");
		assertThat(service.isLocked("short-waits")).isFalse();
		assertNothingLeft();
	}

	/**
	 * Redisson #2883, #2278, #2960: hundreds of threads on one fair lock froze its queue (waiters never woken, or
	 * stuck behind entries of waiters that had given up). 500 threads, 100 in each of five services, each try once
	 * waiting 2.5 s, with a 5 s lease and a 200 ms critical section: every thread returns by its deadline plus a
	 * margin, sections never overlap, at least a sensible share of the 2.5 s / 200 ms holds happen, the threads that
	 * timed out left the queue (nothing left in Redis once all have returned) and a fresh acquisition then succeeds
	 * at once.
	 */
	@Test
	void fiveHundredThreadsDoNotFreezeTheQueue() throws Exception {
		int threads = 500;
		Duration wait = Duration.ofMillis(2500);
		Duration section = Duration.ofMillis(200);
		List<RedisLockService> services = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			services.add(service());
		}
		AtomicInteger inside = new AtomicInteger();
		AtomicBoolean overlap = new AtomicBoolean();
		AtomicInteger acquired = new AtomicInteger();
		List<Duration> late = new java.util.concurrent.CopyOnWriteArrayList<>();
		AtomicLong longest = new AtomicLong();
		EngineDeadlocks.run(threads, 1, Duration.ofSeconds(30), thread -> {
			long start = System.nanoTime();
			Optional<Lease> lease = services.get(thread % services.size())
				.tryAcquire(request("crowd", Duration.ofSeconds(5), wait));
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			longest.accumulateAndGet(took.toMillis(), Math::max);
			if (took.compareTo(wait.plus(MARGIN)) > 0) {
				late.add(took);
			}
			if (lease.isPresent()) {
				try (Lease held = lease.get()) {
					if (inside.incrementAndGet() != 1) {
						overlap.set(true);
					}
					Thread.sleep(section.toMillis()); // the critical section's work, not a synchronisation
					acquired.incrementAndGet();
					inside.decrementAndGet();
				}
			}
		});
		report("500 threads: %d acquired, longest call %d ms (wait %d ms)", acquired.get(), longest.get(), wait.toMillis());
		assertThat(late).as("threads that returned after their deadline plus %s", MARGIN).isEmpty();
		assertThat(overlap).isFalse();
		assertThat(acquired.get()).as("holds of %s within %s", section, wait).isGreaterThanOrEqualTo(5);
		assertNothingLeft();
		long start = System.nanoTime();
		try (Lease fresh = services.get(0).tryAcquire(request("crowd", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow()) {
			assertThat(fresh.isHeld()).isTrue();
		}
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(MARGIN);
		assertNothingLeft();
	}

	/**
	 * Redisson #5503: a holder's lease that had expired left a negative remaining time that blocked the waiter at the
	 * head of the queue. A holder takes a fixed 1 s lease and never releases it; a waiter queued behind it must get
	 * the lock within the lease, one refresh of its queue entry and a margin.
	 */
	@Test
	void aHolderThatNeverReleasesDoesNotBlockTheQueue() throws Exception {
		Duration ttl = Duration.ofSeconds(1);
		RedisLockService holderService = service();
		RedisLockService waiterService = service();
		long start = System.nanoTime();
		Lease abandoned = holderService.acquire(request("abandoned", ttl, Duration.ZERO).withFixedLease());
		Lease lease = waiterService.tryAcquire(request("abandoned", LONG, Duration.ofSeconds(20))).orElseThrow();
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		report("abandoned holder: the waiter got the lock %d ms after the 1 s fixed lease began", took.toMillis());
		assertThat(took).isLessThan(ttl.plus(ENTRY_TTL).plus(MARGIN));
		assertThat(abandoned.isHeld()).isFalse();
		lease.release();
		assertNothingLeft();
	}

	/**
	 * Redisson #3004: a live waiter that waited longer than the queue's thread-wait timeout was dropped from the queue
	 * (or pushed behind later waiters) although it was still waiting. With a 6 s entry ttl, a first waiter and then a
	 * second wait 9 s (1.5 entry ttls) behind a holder: all along, both stay in the queue, the first one ahead, its
	 * position never worse; on release the first gets the lock, then the second.
	 */
	@Test
	void aWaiterThatWaitsLongerThanTheEntryTtlStaysInTheQueue() throws Exception {
		Duration entryTtl = ENTRY_TTL;
		FairQueueProbe probe = new FairQueueProbe(this.server);
		RedisLockService holderService = service(entryTtl);
		RedisLockService firstService = service(entryTtl);
		RedisLockService secondService = service(entryTtl);
		Lease held = holderService.acquire(request("patient", LONG, Duration.ZERO));
		String queue = queueKey(holderService, "patient");
		CompletableFuture<Optional<Lease>> first = CompletableFuture
			.supplyAsync(() -> firstService.tryAcquire(request("patient", LONG, Duration.ofSeconds(30))));
		await().atMost(Duration.ofSeconds(10)).until(() -> !probe.mentioning(firstService.clientId()).isEmpty());
		CompletableFuture<Optional<Lease>> second = CompletableFuture
			.supplyAsync(() -> secondService.tryAcquire(request("patient", LONG, Duration.ofSeconds(30))));
		await().atMost(Duration.ofSeconds(10)).until(() -> !probe.mentioning(secondService.clientId()).isEmpty());
		long until = System.nanoTime() + entryTtl.multipliedBy(3).dividedBy(2).toNanos();
		int worst = Integer.MAX_VALUE;
		int snapshots = 0;
		while (System.nanoTime() - until < 0) {
			List<String> elements = probe.elements(queue);
			int firstAt = FairQueueProbe.position(elements, firstService.clientId());
			int secondAt = FairQueueProbe.position(elements, secondService.clientId());
			if (MODE == LockMode.FAIR) {
				assertThat(firstAt).as("the first waiter's place in %s", elements).isNotNegative().isLessThanOrEqualTo(worst);
				assertThat(secondAt).as("the second waiter's place in %s", elements).isGreaterThan(firstAt);
			}
			worst = firstAt;
			snapshots++;
			assertThat(first).isNotDone();
			assertThat(second).isNotDone();
		}
		report("patient waiters: %d snapshots of the queue over 1.5 entry ttls", snapshots);
		assertThat(snapshots).isPositive();
		held.release();
		Lease firstLease = first.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(second).isNotDone();
		firstLease.release();
		second.get(10, TimeUnit.SECONDS).orElseThrow().release();
		assertNothingLeft();
	}

	/**
	 * Redisson's fair lock promises FIFO order across processes, which dead entries and re-queued waiters broke. Four
	 * JVMs, each its own service, take the lock 250 times each, one after another (1,000 acquisitions), while this
	 * test takes atomic snapshots of the queue on a shared logical clock; {@link FairFifoCheck} states the rule: an
	 * acquisition seen waiting in the queue enters before every acquisition whose attempt began after that moment.
	 * Also: the sections are serial (the order counter reaches 1,000 with growing fencing tokens) and nothing is left.
	 */
	@Test
	void fourProcessesTakeTheLockInFifoOrder(@TempDir Path dir) throws Exception {
		int jvms = 4;
		int each = 250;
		Path startFile = dir.resolve("go");
		List<Path> logs = new ArrayList<>();
		for (int i = 0; i < jvms; i++) {
			Path log = dir.resolve("fifo-" + i + ".log");
			logs.add(log);
			startJvm(log, "fifo", Integer.toString(this.server.port()), "fifo", "p" + i, Integer.toString(each),
					startFile.toString());
		}
		Map<String, String> clientIds = new java.util.HashMap<>();
		for (int i = 0; i < jvms; i++) {
			Path log = logs.get(i);
			clientIds.put("p" + i, await().atMost(Duration.ofSeconds(60)).until(() -> FairLockJvmWorker.clientId(log), id -> id != null));
		}
		RedisLockService local = service();
		String queue = queueKey(local, "fifo");
		StringRedisTemplate redis = this.support.template();
		List<FairQueueProbe.Snapshot> snapshots = new ArrayList<>();
		Files.createFile(startFile);
		long started = System.nanoTime();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (this.processes.stream().anyMatch(Process::isAlive)) {
			assertThat(System.nanoTime() - deadline).as("the processes finished within 60 s").isNegative();
			snapshots.add(FairQueueProbe.snapshot(redis, queue, FairLockJvmWorker.FIFO_CLOCK));
		}
		long took = Duration.ofNanos(System.nanoTime() - started).toMillis();
		for (int i = 0; i < jvms; i++) {
			String output = Files.readString(logs.get(i));
			assertThat(this.processes.get(i).exitValue()).as("JVM %d exit; output:%n%s", i, output).isZero();
			assertThat(output).contains("DONE");
		}
		FairFifoCheck check = new FairFifoCheck(redis.opsForList().range(FairLockJvmWorker.FIFO_LOG, 0, -1), clientIds);
		snapshots.forEach(check::observe);
		assertThat(check.tokensInOrder()).hasSize(jvms * each).isSorted().doesNotHaveDuplicates();
		FairFifoCheck.Result result = check.check();
		report("FIFO: %d acquisitions by %d JVMs in %d ms after the start signal; %d queue snapshots, %d acquisitions seen"
				+ " waiting, %d pairs ordered by the rule, %d violations", jvms * each, jvms, took, snapshots.size(),
				check.seenWaiting(), result.orderedPairs(), result.violations().size());
		if (MODE == LockMode.FAIR) {
			assertThat(result.violations()).isEmpty();
			assertThat(check.seenWaiting()).as("acquisitions seen waiting in %d snapshots", snapshots.size())
				.isGreaterThanOrEqualTo(100);
			assertThat(result.orderedPairs()).isGreaterThanOrEqualTo(1000);
		}
		redis.delete(List.of(FairLockJvmWorker.FIFO_CLOCK, FairLockJvmWorker.FIFO_ORDER, FairLockJvmWorker.FIFO_LOG));
		assertNothingLeft();
	}

	private Process startJvm(Path log, String... args) throws Exception {
		Process process = FairLockJvmWorker.start(log, MODE, args);
		this.processes.add(process);
		return process;
	}

	private static void report(String format, Object... args) {
		System.out.println("[fair scenario] " + String.format(format, args));
	}

	private void assertNothingLeft() {
		assertThat(new FairQueueProbe(this.server).contents()).as("what is left in Redis").isEmpty();
	}

}
