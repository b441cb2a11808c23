package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.StoredLock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Permits ({@link LockMode#PERMITS}): a semaphore whose permits are leases. Up to n holders of every instance at once,
 * each permit with its own token and lease time; a re-entry takes no second permit; another number of permits than
 * the holders' is refused at once, naming the key and both numbers; permits and the other modes exclude each other.
 * An engine without permits must refuse them, naming the key, rather than take something else.
 */
abstract class PermitsTests extends ReadWriteTests {

	/** Skips the test for an engine without permits. */
	private void assumePermits() {
		assumeTrue(supports(LockMode.PERMITS), "the engine does not support permits");
	}

	private static LockRequest permits(String key, int permits, Duration wait) {
		return LockRequest.of(key, LONG_TTL, wait).permits(permits);
	}

	/** An engine without permits refuses a request for them, naming the key, and never takes a lock instead. */
	@Test
	void anEngineWithoutPermitsRefusesThemNamingTheKey() {
		assumeFalse(supports(LockMode.PERMITS), "the engine supports permits");
		String key = key("no-permits");
		LockService service = instance();
		assertThatThrownBy(() -> service.tryAcquire(permits(key, 3, Duration.ZERO)))
			.isInstanceOf(UnsupportedOperationException.class)
			.hasMessageContaining(key);
		assertThat(service.isLocked(key)).isFalse();
	}

	/**
	 * Three instances of four threads each take permits of a semaphore of three over and over: the critical section
	 * itself counts who is inside, and never more than three are.
	 */
	@Test
	void neverMoreHoldersThanPermitsAcrossInstances() {
		assumePermits();
		String key = key("partner-api");
		int permits = 3;
		int rounds = 10;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger sections = new AtomicInteger();
		List<Future<Void>> callers = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			LockService service = instance();
			for (int t = 0; t < 4; t++) {
				callers.add(inBackground(() -> {
					for (int round = 0; round < rounds; round++) {
						try (Lease lease = service.acquire(permits(key, permits, LONG_WAIT))) {
							int now = inside.incrementAndGet();
							most.accumulateAndGet(now, Math::max);
							Thread.yield();
							inside.decrementAndGet();
							sections.incrementAndGet();
						}
					}
					return null;
				}));
			}
		}
		callers.forEach((caller) -> get(caller, STRESS_DEADLINE));
		assertThat(sections).hasValue(3 * 4 * rounds);
		assertThat(most.get()).isBetween(1, permits);
		assertThat(inside).hasValue(0);
		awaitFree(instance(), key);
	}

	/**
	 * Three holders of three instances are inside a semaphore of three at once (each waits for the others inside),
	 * each with a token of its own; a fourth is refused with a wait of zero, and gets in with a greater token once
	 * they left.
	 */
	@Test
	void nPermitsAdmitNHoldersAtOnceAndTheNextIsRefused() throws InterruptedException {
		assumePermits();
		String key = key("reports");
		CountDownLatch in = new CountDownLatch(3);
		CountDownLatch leave = new CountDownLatch(1);
		List<Future<Long>> holders = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			LockService service = instance();
			holders.add(inBackground(() -> {
				try (Lease lease = service.acquire(permits(key, 3, LONG_WAIT))) {
					in.countDown();
					assertThat(leave.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
					return lease.fencingToken();
				}
			}));
		}
		assertThat(in.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as("three holders inside at once").isTrue();
		LockService fourth = instance();
		assertThat(fourth.tryAcquire(permits(key, 3, Duration.ZERO))).as("a fourth holder").isEmpty();
		leave.countDown();
		List<Long> tokens = holders.stream().map(LockServiceTckSupport::get).toList();
		assertThat(tokens).as("each permit has a token of its own").doesNotHaveDuplicates();
		try (Lease lease = fourth.acquire(permits(key, 3, Duration.ZERO))) {
			assertThat(lease.fencingToken()).isGreaterThan(tokens.stream().mapToLong(Long::longValue).max().orElseThrow());
		}
	}

	/**
	 * Two waiters wait for a semaphore of two held by two instances: one release lets one of them in, the other waits
	 * on; the second release lets it in too.
	 */
	@Test
	void aReleaseLetsAsManyWaitersInAsPermitsCameBack() {
		assumePermits();
		String key = key("imports");
		Lease first = instance().acquire(permits(key, 2, Duration.ZERO));
		Lease second = instance().acquire(permits(key, 2, Duration.ZERO));
		LockService waiters = instance();
		List<Future<Lease>> waiting = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			waiting.add(inBackground(() -> waiters.acquire(permits(key, 2, LONG_WAIT))));
		}
		awaitWaiting(waiters, 2, null);
		waiting.forEach(LockServiceTckSupport::assertStaysUndone);
		first.release();
		await().atMost(PATIENCE).until(() -> waiting.stream().anyMatch(Future::isDone));
		Future<Lease> later = waiting.get(0).isDone() ? waiting.get(1) : waiting.get(0);
		Future<Lease> sooner = (later == waiting.get(0)) ? waiting.get(1) : waiting.get(0);
		assertStaysUndone(later);
		second.release();
		Lease one = get(sooner);
		Lease other = get(later);
		assertThat(List.of(one.fencingToken(), other.fencingToken())).doesNotHaveDuplicates()
			.allSatisfy((token) -> assertThat(token).isGreaterThan(Math.max(first.fencingToken(), second.fencingToken())));
		one.release();
		other.release();
		awaitFree(waiters, key);
	}

	/** The holder's re-entry re-enters its permit (same token, same owner): the second permit is still free. */
	@Test
	void aReentryTakesNoSecondPermit() {
		assumePermits();
		String key = key("reentered");
		LockService service = instance();
		LockService other = instance();
		Lease outer = service.acquire(permits(key, 2, Duration.ZERO));
		Lease inner = service.acquire(permits(key, 2, Duration.ZERO));
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(inner.owner()).isEqualTo(outer.owner());
		Optional<Lease> second = other.tryAcquire(permits(key, 2, Duration.ZERO));
		assertThat(second).as("the second permit, still free").isPresent();
		assertThat(second.get().owner()).isNotEqualTo(outer.owner());
		assertThat(instance().tryAcquire(permits(key, 2, Duration.ZERO))).as("a third holder").isEmpty();
		second.get().release();
		inner.release();
		assertThat(outer.isOwned()).as("held until its last hold is released").isTrue();
		outer.release();
		awaitFree(other, key);
	}

	/**
	 * A request for another number of permits than the holders' is refused at once, naming the key and both numbers:
	 * from another instance (also asynchronously, and with a long wait, which it does not wait out) and as the
	 * holder's own re-entry. Once nobody holds the key, a new number is taken.
	 */
	@Test
	void anotherNumberOfPermitsIsRefusedAtOnceNamingTheKeyAndBothNumbers() {
		assumePermits();
		String key = key("tenant-7");
		LockService service = instance();
		LockService other = instance();
		Lease lease = service.acquire(permits(key, 3, Duration.ZERO));
		Future<Optional<Lease>> refused = inBackground(() -> other.tryAcquire(permits(key, 5, LONG_WAIT)));
		// within PATIENCE, far less than LONG_WAIT: refused, not waited for
		assertThatIllegalStateException().isThrownBy(() -> get(refused))
			.withMessageContaining("'" + key + "'")
			.withMessageContaining("semaphore of 3 permits")
			.withMessageContaining("asks for 5 permits");
		if (other instanceof AsyncLockService async) {
			CompletableFuture<Optional<Lease>> refusedAsync = async.tryAcquireAsync(permits(key, 4, LONG_WAIT),
					LockOwner.newOwner());
			assertThatIllegalStateException().isThrownBy(() -> get(refusedAsync))
				.withMessageContaining("'" + key + "'")
				.withMessageContaining("semaphore of 3 permits")
				.withMessageContaining("asks for 4 permits");
		}
		assertThatIllegalStateException().isThrownBy(() -> service.tryAcquire(permits(key, 4, Duration.ZERO)))
			.withMessageContaining("'" + key + "'")
			.withMessageContaining("semaphore of 3 permits")
			.withMessageContaining("asks for 4 permits");
		assertThat(lease.isOwned()).isTrue();
		lease.release();
		Lease renumbered = other.acquire(permits(key, 5, Duration.ZERO));
		assertThatIllegalStateException().isThrownBy(() -> service.tryAcquire(permits(key, 3, Duration.ZERO)))
			.withMessageContaining("semaphore of 5 permits")
			.withMessageContaining("asks for 3 permits");
		renumbered.release();
	}

	/**
	 * A crashed instance's permit (a fixed lease, never released) comes back at its lease time (not before, where the
	 * test controls time): the waiter gets it with a greater token, while the other permit's holder keeps its own.
	 */
	@Test
	void aCrashedHoldersPermitComesBackAtItsLeaseTime() {
		assumePermits();
		String key = key("batch");
		Duration ttl = shortTtl();
		LockService keeper = instance();
		LockService doomed = instance();
		LockService survivor = instance();
		Lease kept = keeper.acquire(permits(key, 2, Duration.ZERO));
		Lease abandoned = doomed.acquire(LockRequest.of(key, ttl, Duration.ZERO).withFixedLease().permits(2));
		crash(doomed);
		Future<Optional<Lease>> next = inBackground(() -> survivor.tryAcquire(permits(key, 2, LONG_WAIT)));
		if (timeIsControlled()) {
			awaitWaiting(survivor, 1, next);
			passTime(ttl.minusMillis(1));
			assertStaysUndone(next);
			passTime(Duration.ofMillis(1));
		}
		else {
			passTime(ttl);
		}
		Lease lease = get(next).orElseThrow();
		assertThat(lease.fencingToken()).isGreaterThan(Math.max(abandoned.fencingToken(), kept.fencingToken()));
		assertThat(kept.isOwned()).as("the other permit, still its holder's").isTrue();
		lease.release();
		kept.release();
	}

	/** Tokens differ between the holders of a semaphore and grow with every new holder. */
	@Test
	void tokensDifferBetweenHoldersAndGrow() {
		assumePermits();
		String key = key("tokens");
		Lease first = instance().acquire(permits(key, 2, Duration.ZERO));
		Lease second = instance().acquire(permits(key, 2, Duration.ZERO));
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		first.release();
		Lease third = instance().acquire(permits(key, 2, Duration.ZERO));
		assertThat(third.fencingToken()).isGreaterThan(second.fencingToken());
		second.release();
		third.release();
	}

	/** Permits exclude an exclusive lock (and, where the engine has them, a read lock) of the same key, and the reverse. */
	@Test
	void permitsAndOtherModesOnOneKeyExcludeEachOther() {
		assumePermits();
		String key = key("mixed");
		LockService service = instance();
		LockService other = instance();
		List<LockMode> modes = new ArrayList<>(List.of(LockMode.EXCLUSIVE));
		if (supports(LockMode.READ)) {
			modes.add(LockMode.READ);
		}
		Lease permit = service.acquire(permits(key, 4, Duration.ZERO));
		for (LockMode mode : modes) {
			assertThat(other.tryAcquire(LockRequest.of(key, LONG_TTL, Duration.ZERO).withMode(mode))).as(mode.name())
				.isEmpty();
		}
		permit.release();
		for (LockMode mode : modes) {
			Lease held = service.acquire(LockRequest.of(key, LONG_TTL, Duration.ZERO).withMode(mode));
			assertThat(other.tryAcquire(permits(key, 4, Duration.ZERO))).as("permits beside " + mode.name()).isEmpty();
			held.release();
		}
		other.acquire(permits(key, 4, Duration.ZERO)).release();
	}

	/**
	 * Each holder's operator view shows its permit with mode PERMITS; the store's listing shows the semaphore once,
	 * with mode PERMITS and the holds of all its holders.
	 */
	@Test
	void snapshotsAndTheListingShowPermits() {
		assumePermits();
		String key = key("listed");
		LockService a = instance();
		LockService b = instance();
		Lease first = a.acquire(permits(key, 3, Duration.ZERO));
		Lease second = b.acquire(permits(key, 3, Duration.ZERO));
		for (Lease lease : List.of(first, second)) {
			LockService holder = (lease == first) ? a : b;
			assertThat(view(holder).activeLeases()).singleElement().satisfies((snapshot) -> {
				assertThat(snapshot.key()).isEqualTo(key);
				assertThat(snapshot.mode()).isEqualTo(LockMode.PERMITS);
				assertThat(snapshot.fencingToken()).isEqualTo(lease.fencingToken());
				assertThat(snapshot.holdCount()).isEqualTo(1);
			});
		}
		LockService listing = instance();
		if (listing instanceof LockDirectory directory) {
			assertThat(listed(directory, key)).singleElement().satisfies((lock) -> {
				assertThat(lock.mode()).isEqualTo(LockMode.PERMITS);
				assertThat(lock.holds()).isEqualTo(2);
				assertThat(lock.remainingTtl()).isPositive().isLessThanOrEqualTo(LONG_TTL);
			});
		}
		first.release();
		second.release();
		assertThat(view(a).activeLeases()).extracting(LeaseSnapshot::key).doesNotContain(key);
	}

	/** The locks of the store's listing that have {@code key}, over every page. */
	private static List<StoredLock> listed(LockDirectory directory, String key) {
		List<StoredLock> found = new ArrayList<>();
		String cursor = null;
		int pages = 0;
		do {
			LockPage page = directory.locks(cursor, 100);
			page.locks().stream().filter((lock) -> lock.key().equals(key)).forEach(found::add);
			cursor = page.nextCursor();
			assertThat(++pages).as("the listing ends").isLessThan(10_000);
		}
		while (cursor != null);
		return found;
	}

}
