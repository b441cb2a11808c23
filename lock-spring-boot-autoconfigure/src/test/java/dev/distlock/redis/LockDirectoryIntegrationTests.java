package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.distlock.core.Lease;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.StoredLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Every lock in Redis, whichever instance holds it, page by page ({@link LockDirectory}, issue 29): an instance that
 * holds nothing lists the locks of another, with each kind's mode, holds, time left, token, fair queue and waiting
 * instances; pages follow each other to the end; nothing that is not a held lock is listed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockDirectoryIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(60);

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void anInstanceThatHoldsNothingListsEveryLockOfAnotherPageByPage() {
		RedisLockService holder = this.support.service();
		RedisLockService operator = this.support.service();
		Map<String, Lease> leases = new java.util.HashMap<>();
		for (int i = 0; i < 130; i++) {
			leases.put("job-" + i, holder.acquire("job-" + i, TTL, Duration.ZERO));
		}
		// keys the SCAN pattern could trip over: glob characters, braces, a colon
		for (String key : List.of("a*b?[c]", "brace}", "{x}", "item:46")) {
			leases.put(key, holder.acquire(key, TTL, Duration.ZERO));
		}
		// what is not a held lock: another prefix's lease, a string and a list under the prefix, waiters' notes only
		this.server.execute("HSET", "other:{job-1}", "owner", "1", "~t", "5");
		this.server.execute("SET", "lock:{string}", "x");
		this.server.execute("RPUSH", "lock:{list}", "x");
		this.server.execute("HSET", "lock:{notes-only}", "~w:abc", "1");

		List<LockPage> pages = pages(operator, 25);

		List<StoredLock> listed = pages.stream().flatMap(page -> page.locks().stream()).toList();
		assertThat(listed.stream().map(StoredLock::key).collect(Collectors.toSet()))
			.isEqualTo(leases.keySet());
		assertThat(pages).hasSizeGreaterThanOrEqualTo(5);
		assertThat(pages).allSatisfy(page -> assertThat(page.locks()).hasSizeLessThanOrEqualTo(2 * 25));
		assertThat(pages.get(pages.size() - 1).nextCursor()).isNull();
		Map<String, StoredLock> byKey = listed.stream()
			.collect(Collectors.toMap(StoredLock::key, Function.identity(), (a, b) -> a));
		assertThat(byKey).allSatisfy((key, lock) -> {
			Lease lease = leases.get(key);
			assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
			assertThat(lock.holds()).isEqualTo(1);
			assertThat(lock.fencingToken()).isEqualTo(lease.fencingToken());
			assertThat(lock.remainingTtl()).isPositive().isLessThanOrEqualTo(TTL);
			assertThat(lock.queueLength()).isEqualTo(-1);
			assertThat(lock.waitingInstances()).isZero();
			assertThat(lock.nodes()).isEqualTo(1);
		});

		leases.values().forEach(Lease::release);
		assertThat(pages(operator, 100)).allSatisfy(page -> assertThat(page.locks()).isEmpty());
	}

	@Test
	void eachKindIsListedWithItsModeHoldsQueueAndWaitingInstances() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService otherReader = this.support.service();
		RedisLockService waiters = this.support.service();
		RedisLockService operator = this.support.service();
		Lease outer = holder.acquire("twice", TTL, Duration.ZERO);
		Lease inner = holder.acquire("twice", TTL, Duration.ZERO);
		Lease firstReader = holder.tryAcquire(LockRequest.of("report", TTL, Duration.ZERO).read()).orElseThrow();
		Lease secondReader = otherReader.tryAcquire(LockRequest.of("report", TTL, Duration.ZERO).read())
			.orElseThrow();
		Lease writer = holder.tryAcquire(LockRequest.of("ledger", TTL, Duration.ZERO).write()).orElseThrow();
		Lease fair = holder.tryAcquire(LockRequest.of("queue", TTL, Duration.ZERO).fair()).orElseThrow();
		CompletableFuture<Optional<Lease>> queued = waiters
			.tryAcquireAsync(LockRequest.of("queue", TTL, WAIT).fair(), LockOwner.newOwner());
		Lease contended = holder.acquire("contended", TTL, Duration.ZERO);
		ForceReleaseOfEveryKindIntegrationTests.Waiting waiting = ForceReleaseOfEveryKindIntegrationTests.Waiting
			.start(waiters, LockRequest.of("contended", TTL, WAIT));
		try {
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				Map<String, StoredLock> listed = byKey(operator);
				assertThat(listed.get("queue")).isNotNull()
					.satisfies(lock -> assertThat(lock.queueLength()).isEqualTo(1));
				assertThat(listed.get("contended")).isNotNull()
					.satisfies(lock -> assertThat(lock.waitingInstances()).isEqualTo(1));
			});
			Map<String, StoredLock> listed = byKey(operator);
			assertThat(listed).containsOnlyKeys("twice", "report", "ledger", "queue", "contended");
			assertThat(listed.get("twice")).satisfies(lock -> {
				assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
				assertThat(lock.holds()).isEqualTo(2);
				assertThat(lock.fencingToken()).isEqualTo(outer.fencingToken());
			});
			assertThat(listed.get("report")).satisfies(lock -> {
				assertThat(lock.mode()).isEqualTo(LockMode.READ);
				assertThat(lock.holds()).isEqualTo(2);
				assertThat(lock.fencingToken()).isEqualTo(firstReader.fencingToken());
			});
			assertThat(listed.get("ledger")).satisfies(lock -> {
				assertThat(lock.mode()).isEqualTo(LockMode.WRITE);
				assertThat(lock.holds()).isEqualTo(1);
				assertThat(lock.fencingToken()).isEqualTo(writer.fencingToken());
			});
			assertThat(listed.get("queue")).satisfies(lock -> {
				assertThat(lock.mode()).isEqualTo(LockMode.FAIR);
				assertThat(lock.holds()).isEqualTo(1);
				assertThat(lock.fencingToken()).isEqualTo(fair.fencingToken());
				assertThat(lock.waitingInstances()).isEqualTo(-1);
			});
			assertThat(listed.get("contended")).satisfies(lock -> {
				assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
				assertThat(lock.queueLength()).isEqualTo(-1);
			});
		}
		finally {
			inner.release();
			outer.release();
			firstReader.release();
			secondReader.release();
			writer.release();
			fair.release();
			queued.get(WAIT.toSeconds() + 15, TimeUnit.SECONDS).ifPresent(Lease::release);
			contended.release();
			waiting.result().get(WAIT.toSeconds() + 15, TimeUnit.SECONDS).ifPresent(Lease::release);
		}
		assertThat(byKey(operator)).isEmpty();
	}

	@Test
	void aCursorThatNoPageReturnedAndAPageSizeOutOfRangeAreRefusedByName() {
		RedisLockService operator = this.support.service();
		assertThatIllegalArgumentException().isThrownBy(() -> operator.locks("not-a-cursor", 10))
			.withMessageContaining("'cursor' not-a-cursor");
		assertThatIllegalArgumentException().isThrownBy(() -> operator.locks(null, 0))
			.withMessageContaining("'pageSize'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> operator.locks(null, LockDirectory.MAX_PAGE_SIZE + 1))
			.withMessageContaining("'pageSize'");
		assertThat(operator.locks(null, 10)).satisfies(page -> {
			assertThat(page.locks()).isEmpty();
			assertThat(page.nextCursor()).isNull();
		});
	}

	@Test
	void aRedisThatDoesNotAnswerFailsThePageWithinTheCommandTimeoutNamingWhatFailed() {
		RedisLockService operator = this.support.service();
		operator.acquire("held", TTL, Duration.ZERO).release();
		this.server.pause();
		try {
			assertThatExceptionOfType(LockUnavailableException.class).isThrownBy(() -> operator.locks(null, 10))
				.withMessageContaining("Could not list every lock");
		}
		finally {
			this.server.resume();
		}
		assertThat(operator.locks(null, 10).locks()).isEmpty();
	}

	/** Every page of {@code directory}'s listing, from the first to the one without a next cursor. */
	static List<LockPage> pages(LockDirectory directory, int pageSize) {
		List<LockPage> pages = new ArrayList<>();
		Set<String> cursors = new HashSet<>();
		String cursor = null;
		do {
			LockPage page = directory.locks(cursor, pageSize);
			pages.add(page);
			cursor = page.nextCursor();
			assertThat(cursor == null || cursors.add(cursor)).as("a cursor is never given twice: " + cursor).isTrue();
			assertThat(pages).as("the listing ends").hasSizeLessThan(10_000);
		}
		while (cursor != null);
		return pages;
	}

	/** Every lock of the listing by its key. */
	static Map<String, StoredLock> byKey(LockDirectory directory) {
		return pages(directory, 100).stream()
			.flatMap(page -> page.locks().stream())
			.collect(Collectors.toMap(StoredLock::key, Function.identity(), (a, b) -> a));
	}

}
