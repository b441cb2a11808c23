package dev.distlock.redis;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Permits across instances on the Redis engine (issue 30): a semaphore whose permits are leases. Never more holders
 * than permits, counted in Redis by the critical section itself, with three instances of eight threads; a release lets
 * a waiter in; a re-entry takes no second permit; another number of permits is refused, naming the key and both
 * numbers; a crashed holder's permit comes back at its lease time, also when its process is killed; tokens grow with every permit; permits and the
 * other kinds of lock on one key exclude each other; nothing is left in Redis once every permit is back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PermitsIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	private static LockRequest permits(String key, int permits) {
		return LockRequest.of(key, TTL, WAIT).permits(permits);
	}

	private static Lease acquire(RedisLockService service, LockRequest request) {
		return service.tryAcquire(request).orElseThrow(() -> new AssertionError("not acquired: " + request));
	}

	@Test
	void threeInstancesOfEightThreadsNeverHaveMoreThanFiveInside() throws Exception {
		List<RedisLockService> instances = List.of(this.support.service(), this.support.service(),
				this.support.service());
		StringRedisTemplate redis = this.support.template();
		AtomicLong most = new AtomicLong();
		AtomicInteger sections = new AtomicInteger();
		List<Future<?>> workers = new ArrayList<>();
		for (int i = 0; i < 24; i++) {
			RedisLockService service = instances.get(i % 3);
			workers.add(this.threads.submit(() -> {
				for (int round = 0; round < 15; round++) {
					try (Lease lease = acquire(service, permits("partner-api", 5))) {
						// counted in Redis by the critical section itself, so every instance sees one count
						long inside = redis.opsForValue().increment("inside");
						most.accumulateAndGet(inside, Math::max);
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
						redis.opsForValue().decrement("inside");
						sections.incrementAndGet();
					}
				}
				return null;
			}));
		}
		for (Future<?> worker : workers) {
			worker.get(90, TimeUnit.SECONDS);
		}
		assertThat(sections).hasValue(24 * 15);
		assertThat(most.get()).isBetween(1L, 5L);
		assertThat(redis.opsForValue().get("inside")).isEqualTo("0");
		assertThat(LockTestSupport.leftKeys(this.server, "*partner-api*")).isEmpty();
	}

	@Test
	void fivePermitsAdmitFiveHoldersOfTwoInstancesAtOnceAndAReleaseLetsTheSixthIn() throws Exception {
		List<RedisLockService> instances = List.of(this.support.service(), this.support.service());
		CountDownLatch inside = new CountDownLatch(5);
		CountDownLatch leave = new CountDownLatch(1);
		List<Future<Long>> holders = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			RedisLockService service = instances.get(i % 2);
			holders.add(this.threads.submit(() -> {
				try (Lease lease = acquire(service, permits("reports", 5))) {
					inside.countDown();
					assertThat(leave.await(60, TimeUnit.SECONDS)).isTrue();
					return lease.fencingToken();
				}
			}));
		}
		assertThat(inside.await(60, TimeUnit.SECONDS)).as("five holders inside at once").isTrue();
		RedisLockService sixth = instances.get(1);
		assertThat(sixth.tryAcquire(LockRequest.of("reports", TTL, Duration.ZERO).permits(5))).isEmpty();
		Future<Lease> waiting = this.threads.submit(() -> acquire(sixth, permits("reports", 5)));
		leave.countDown();
		try (Lease lease = waiting.get(60, TimeUnit.SECONDS)) {
			assertThat(lease.isHeld()).isTrue();
			Set<Long> tokens = new HashSet<>();
			for (Future<Long> holder : holders) {
				tokens.add(holder.get(60, TimeUnit.SECONDS));
			}
			assertThat(tokens).as("each permit has a token of its own").hasSize(5);
			assertThat(lease.fencingToken()).isGreaterThan(tokens.stream().mapToLong(Long::longValue).max().orElseThrow());
		}
		assertThat(LockTestSupport.leftKeys(this.server, "*reports*")).isEmpty();
	}

	@Test
	void aReentryByTheHolderTakesNoSecondPermit() {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		LockRequest request = permits("imports", 2);
		try (Lease first = acquire(service, request); Lease again = acquire(service, request)) {
			assertThat(again.owner()).isEqualTo(first.owner());
			Map<Object, Object> hash = this.support.template().opsForHash().entries(service.redisKey("imports"));
			assertThat(hash).containsEntry(first.owner(), "2").containsEntry("~p", "2");
			try (Lease second = acquire(other, request)) {
				assertThat(second.owner()).isNotEqualTo(first.owner());
				// both permits are held, one of them twice: a third instance gets none
				assertThat(this.support.service().tryAcquire(LockRequest.of("imports", TTL, Duration.ZERO).permits(2)))
					.isEmpty();
			}
		}
		assertThat(LockTestSupport.leftKeys(this.server, "*imports*")).isEmpty();
	}

	@Test
	void anotherNumberOfPermitsIsRefusedAtOnceNamingTheKeyAndBothNumbers() throws Exception {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		try (Lease lease = acquire(service, permits("tenant-7", 3))) {
			long start = System.nanoTime();
			assertThatIllegalStateException().isThrownBy(() -> other.tryAcquire(permits("tenant-7", 5)))
				.withMessageContaining("'tenant-7'")
				.withMessageContaining("semaphore of 3 permits")
				.withMessageContaining("asks for 5 permits");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).as("refused, not waited for").isLessThan(WAIT);
			CompletableFuture<Optional<Lease>> async = other.tryAcquireAsync(permits("tenant-7", 4),
					LockOwner.newOwner("async-owner"));
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> async.get(60, TimeUnit.SECONDS))
				.withCauseInstanceOf(IllegalStateException.class)
				.withMessageContaining("semaphore of 3 permits")
				.withMessageContaining("asks for 4 permits");
			// the holder's own re-entry with another number: refused in the process, before any call
			assertThatIllegalStateException().isThrownBy(() -> service.tryAcquire(permits("tenant-7", 4)))
				.withMessageContaining("'tenant-7'")
				.withMessageContaining("semaphore of 3 permits");
			assertThat(lease.isOwned()).isTrue();
		}
		// once nobody holds it, a new number of permits is taken
		try (Lease lease = acquire(other, permits("tenant-7", 5))) {
			assertThat(this.support.template().opsForHash().get(other.redisKey("tenant-7"), "~p")).isEqualTo("5");
		}
	}

	@Test
	void aCrashedHoldersPermitComesBackAtItsLeaseTime() throws Exception {
		RedisLockService crashed = this.support.service();
		RedisLockService survivor = this.support.service();
		// a holder that never releases nor renews: its permit ends at its lease time, and the waiter gets it then
		long start = System.nanoTime(); // before the permit's lease time began: a stall cannot shorten what is measured
		Lease forgotten = acquire(crashed, LockRequest.of("batch", Duration.ofSeconds(2), WAIT).withFixedLease()
			.permits(1));
		try (Lease lease = acquire(survivor, permits("batch", 1))) {
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofSeconds(1));
			assertThat(lease.fencingToken()).isGreaterThan(forgotten.fencingToken());
			await().atMost(WAIT).until(() -> !forgotten.isOwned());
		}
	}

	@Test
	void aKilledHolderProcessLosesNoPermit(@TempDir Path dir) throws Exception {
		RedisLockService service = this.support.service();
		Path log = dir.resolve("worker.log");
		Process worker = PermitJvmWorker.start(log, Integer.toString(this.server.port()), "killed", "2", "3000");
		try {
			String killedOwner = await().atMost(Duration.ofSeconds(60))
				.until(() -> PermitJvmWorker.heldOwner(log), owner -> owner != null);
			Lease mine = acquire(service, permits("killed", 2));
			assertThat(this.support.service().tryAcquire(LockRequest.of("killed", TTL, Duration.ZERO).permits(2)))
				.as("both permits held: the worker's and this one")
				.isEmpty();
			worker.destroyForcibly();
			assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
			// nobody releases the killed process's permit: it comes back at its lease time, and a waiter gets it
			try (Lease taken = acquire(this.support.service(), permits("killed", 2))) {
				assertThat(this.support.template().opsForHash().hasKey(service.redisKey("killed"), killedOwner)).isFalse();
				assertThat(taken.isOwned()).isTrue();
			}
			mine.release();
			assertThat(LockTestSupport.leftKeys(this.server, "*killed*")).isEmpty();
		}
		finally {
			worker.destroyForcibly();
		}
	}

	@Test
	void aRenewedPermitOutlivesItsLeaseTimeAndItsReleaseAnswersTheSameWhenRunTwice() {
		RedisLockService service = this.support.quicklyRenewingService();
		Lease lease = acquire(service, LockRequest.of("renewed", LockTestSupport.RENEWED_TTL, WAIT).permits(3));
		LockTestSupport.awaitRenewal(service, lease);
		assertThat(lease.isOwned()).isTrue();
		lease.release();
		assertThat(lease.isHeld()).isFalse();
		assertThat(LockTestSupport.leftKeys(this.server, "*renewed*")).isEmpty();
	}

	@Test
	void permitsAndTheOtherKindsOfLockOnOneKeyExcludeEachOther() {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		try (Lease permit = acquire(service, permits("mixed", 4))) {
			for (LockMode mode : List.of(LockMode.EXCLUSIVE, LockMode.READ, LockMode.WRITE, LockMode.FAIR)) {
				assertThat(other.tryAcquire(LockRequest.of("mixed", TTL, Duration.ZERO).withMode(mode)))
					.as(mode.name())
					.isEmpty();
			}
		}
		try (Lease exclusive = acquire(service, LockRequest.of("mixed", TTL, WAIT))) {
			assertThat(other.tryAcquire(LockRequest.of("mixed", TTL, Duration.ZERO).permits(4))).isEmpty();
		}
		try (Lease read = acquire(service, LockRequest.of("mixed", TTL, WAIT).read())) {
			assertThat(other.tryAcquire(LockRequest.of("mixed", TTL, Duration.ZERO).permits(4))).isEmpty();
		}
	}

	@Test
	void anAsynchronousOwnerWaitsForAPermitAndGetsItAtTheRelease() throws Exception {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		Lease held = acquire(service, permits("async", 1));
		CompletableFuture<Optional<Lease>> waiting = other.tryAcquireAsync(permits("async", 1),
				LockOwner.newOwner("reactive-caller"));
		assertThat(waiting).isNotDone();
		held.release();
		try (Lease lease = waiting.get(60, TimeUnit.SECONDS).orElseThrow()) {
			assertThat(lease.isOwned()).isTrue();
			assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
		}
	}

	@Test
	void theOperatorViewAndTheListingShowASemaphoresHolders() {
		RedisLockService service = this.support.service();
		try (Lease first = acquire(service, permits("listed", 3)); Lease second = acquire(this.support.service(),
				permits("listed", 3))) {
			assertThat(service.activeLeases()).singleElement()
				.satisfies(snapshot -> assertThat(snapshot.mode()).isEqualTo(LockMode.PERMITS));
			assertThat(service.locks(null, 10).locks()).singleElement().satisfies(lock -> {
				assertThat(lock.mode()).isEqualTo(LockMode.PERMITS);
				assertThat(lock.holds()).isEqualTo(2);
			});
		}
	}

}
