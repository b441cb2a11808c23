package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.distlock.core.Lease;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.StoredLock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Every lock in the store, whichever instance holds it, page by page: for engines that are a {@link LockDirectory}
 * (skipped for others). The store may hold other tests' locks; these tests look at their own keys.
 */
abstract class DirectoryTests extends PermitsTests {

	/** An instance that holds nothing lists another's locks, each once over the pages, with its holds and token. */
	@Test
	void anInstanceListsAnotherInstancesLocksPageByPage() {
		LockService holder = instance();
		LockDirectory directory = directory(instance());
		Map<String, Lease> leases = new HashMap<>();
		for (int i = 0; i < 23; i++) {
			String key = key("listed-" + i);
			leases.put(key, holder.acquire(key, LONG_TTL, Duration.ZERO));
		}
		String twice = key("listed-0");
		Lease inner = holder.acquire(twice, LONG_TTL, Duration.ZERO);

		List<LockPage> pages = pages(directory, 5);

		Map<String, StoredLock> listed = ours(pages, leases);
		assertThat(listed.keySet()).isEqualTo(leases.keySet());
		// a SCAN step may give more than it was asked for (at most twice the page size, the bound below), so 23 locks
		// take at least 3 pages, not 5: how many more is up to how Redis walks its table (4 pages seen once)
		assertThat(pages).hasSizeGreaterThanOrEqualTo(3);
		assertThat(pages).allSatisfy((page) -> assertThat(page.locks()).hasSizeLessThanOrEqualTo(10));
		leases.forEach((key, lease) -> assertThat(listed.get(key)).satisfies((lock) -> {
			assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
			assertThat(lock.holds()).isEqualTo(key.equals(twice) ? 2 : 1);
			if (holderReportsTheLeasesOwnToken()) {
				assertThat(lock.fencingToken()).isEqualTo(lease.fencingToken());
			}
			else {
				assertThat(lock.fencingToken()).isGreaterThanOrEqualTo(lease.fencingToken());
			}
			assertThat(lock.remainingTtl()).isPositive().isLessThanOrEqualTo(LONG_TTL);
			assertThat(lock.nodes()).isGreaterThanOrEqualTo(1);
			// who holds it, by the label the holder's lease stored (issue 29)
			assertThat(lock.holder()).isEqualTo(lease.holder().toString());
		}));

		inner.release();
		leases.values().forEach(Lease::release);
		assertThat(ours(pages(directory, 100), leases)).isEmpty();
	}

	/** A read lock of two readers is listed as one lock with both holds; a write lock as a write lock. */
	@Test
	void readAndWriteLocksAreListedWithTheirModes() {
		assumeThat(supports(LockMode.READ)).as("the engine takes read-write locks").isTrue();
		LockService readers = instance();
		LockService otherReaders = instance();
		LockDirectory directory = directory(instance());
		String report = key("report");
		String ledger = key("ledger");
		Lease first = readers.tryAcquire(LockRequest.of(report, LONG_TTL, Duration.ZERO).read()).orElseThrow();
		Lease second = otherReaders.tryAcquire(LockRequest.of(report, LONG_TTL, Duration.ZERO).read()).orElseThrow();
		Lease writer = readers.tryAcquire(LockRequest.of(ledger, LONG_TTL, Duration.ZERO).write()).orElseThrow();

		Map<String, StoredLock> listed = ours(pages(directory, 100), Map.of(report, first, ledger, writer));

		assertThat(listed.get(report)).satisfies((lock) -> {
			assertThat(lock.mode()).isEqualTo(LockMode.READ);
			assertThat(lock.holds()).isEqualTo(2);
			assertThat(lock.holder()).contains(first.holder().toString()).contains(second.holder().toString());
		});
		assertThat(listed.get(ledger)).satisfies((lock) -> {
			assertThat(lock.mode()).isEqualTo(LockMode.WRITE);
			assertThat(lock.holds()).isEqualTo(1);
			assertThat(lock.fencingToken()).isEqualTo(writer.fencingToken());
			assertThat(lock.holder()).isEqualTo(writer.holder().toString());
		});
		first.release();
		second.release();
		writer.release();
	}

	/** A cursor no page returned and a page size out of range are refused, naming them. */
	@Test
	void aForeignCursorAndAPageSizeOutOfRangeAreRefused() {
		LockDirectory directory = directory(instance());
		assertThatIllegalArgumentException().isThrownBy(() -> directory.locks("not-a-cursor", 10))
			.withMessageContaining("'cursor'");
		assertThatIllegalArgumentException().isThrownBy(() -> directory.locks(null, 0))
			.withMessageContaining("'pageSize'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> directory.locks(null, LockDirectory.MAX_PAGE_SIZE + 1))
			.withMessageContaining("'pageSize'");
	}

	private static LockDirectory directory(LockService instance) {
		assumeThat(instance).as("the engine lists its store's locks").isInstanceOf(LockDirectory.class);
		return (LockDirectory) instance;
	}

	private static List<LockPage> pages(LockDirectory directory, int pageSize) {
		List<LockPage> pages = new ArrayList<>();
		String cursor = null;
		do {
			LockPage page = directory.locks(cursor, pageSize);
			pages.add(page);
			cursor = page.nextCursor();
			assertThat(pages).as("the listing ends").hasSizeLessThan(10_000);
		}
		while (cursor != null);
		return pages;
	}

	/** The listed locks whose keys are among {@code keys}, by key (a lock listed twice by a scan counts once). */
	private static Map<String, StoredLock> ours(List<LockPage> pages, Map<String, Lease> keys) {
		return pages.stream()
			.flatMap((page) -> page.locks().stream())
			.filter((lock) -> keys.containsKey(lock.key()))
			.collect(Collectors.toMap(StoredLock::key, (lock) -> lock, (a, b) -> a));
	}

}
