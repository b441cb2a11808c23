package dev.distlock.redis.internal.lease;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockPage;
import dev.distlock.core.LogSafe;
import dev.distlock.core.StoredLock;
import dev.distlock.redis.internal.store.ListingSource;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.store.StoreScan;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;

/**
 * The pages of a {@link LockDirectory} over parts scanned in turn (one Redis; the masters of a Cluster; the nodes of a
 * quorum). A cursor names the part and the part's own scan cursor, {@code <part>:<scan cursor>}, so that no state is
 * kept between pages: any instance can serve the next page.
 * <p>
 * A page takes scan steps until it has about the page size, the parts are done, or {@value #MAX_STEPS} steps were
 * taken (a store of many keys that are no locks): a page may then be short, or empty, with a cursor to go on.
 */
public final class LockListing {

	/** The scan steps one page takes at most, so that a page's time is bounded whatever else the store holds. */
	static final int MAX_STEPS = 32;

	private LockListing() {
	}

	/**
	 * One page.
	 * @param source what to scan
	 * @param cursor a previous page's cursor, or null to start
	 * @param pageSize about how many locks to list
	 * @param keyPrefix the engine's key prefix, for the message of a failure
	 * @return the page
	 * @throws dev.distlock.core.LockUnavailableException when the store could not be read
	 */
	public static LockPage page(ListingSource source, @Nullable String cursor, int pageSize, String keyPrefix) {
		try {
			return read(source, cursor, pageSize);
		}
		catch (DataAccessException ex) {
			throw RedisFailures.of("*", keyPrefix + ":{*}", "list every", ex, "");
		}
	}

	private static LockPage read(ListingSource source, @Nullable String cursor, int pageSize) {
		if (pageSize < 1 || pageSize > LockDirectory.MAX_PAGE_SIZE) {
			throw new IllegalArgumentException(
					"'pageSize' must be 1 to " + LockDirectory.MAX_PAGE_SIZE + ", not " + pageSize);
		}
		int[] parts = source.parts();
		if (parts.length == 0) {
			return new LockPage(List.of(), null);
		}
		int index;
		String scanCursor;
		if (cursor == null || cursor.isEmpty()) {
			index = 0;
			scanCursor = "0";
		}
		else {
			int colon = cursor.indexOf(':');
			int part;
			try {
				part = Integer.parseInt(cursor.substring(0, Math.max(0, colon)));
				scanCursor = cursor.substring(colon + 1);
				Long.parseUnsignedLong(scanCursor);
			}
			catch (NumberFormatException | StringIndexOutOfBoundsException ex) {
				throw new IllegalArgumentException("'cursor' " + LogSafe.escape(cursor)
						+ " is not one a page of this listing returned (start again without a cursor)");
			}
			index = indexOf(parts, part);
			if (index < parts.length && parts[index] != part) {
				scanCursor = "0"; // the cursor's part is gone: the next one is scanned from its start
			}
		}
		List<StoredLock> locks = new ArrayList<>();
		for (int steps = 0; index < parts.length && locks.size() < pageSize && steps < MAX_STEPS; steps++) {
			StoreScan.Step step = source.scan(parts[index], scanCursor, pageSize - locks.size());
			for (String redisKey : step.redisKeys()) {
				source.describe(parts[index], redisKey).ifPresent(locks::add);
			}
			if ("0".equals(step.cursor())) {
				index++;
				scanCursor = "0";
			}
			else {
				scanCursor = step.cursor();
			}
		}
		return new LockPage(locks, (index < parts.length) ? parts[index] + ":" + scanCursor : null);
	}

	/**
	 * Where a cursor's part is among {@code parts}: its index, or that of the first part after it when it is gone (a
	 * master that no longer serves slots: the scan goes on at the next one).
	 */
	private static int indexOf(int[] parts, int part) {
		for (int i = 0; i < parts.length; i++) {
			if (parts[i] >= part) {
				return i;
			}
		}
		return parts.length;
	}

}
