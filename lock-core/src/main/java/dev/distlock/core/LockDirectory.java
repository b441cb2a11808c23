package dev.distlock.core;

import org.jspecify.annotations.Nullable;

/**
 * Every lock the store holds under the engine's key prefix, whichever process holds it: the view an operator needs
 * when a lock is stuck and nobody knows which instance has it. Unlike {@link LockOperatorView}, which only reads the
 * engine's own state, this reads the store, page by page, so a listing of many locks never loads them all at once.
 * <p>
 * The listing is read-only and weakly consistent, as Redis's {@code SCAN} is: a lock held from the first page to the
 * last is listed at least once (on a Cluster whose masters did not change meanwhile), a lock taken or released while
 * the pages are read may or may not be listed, and each entry is what the store said when its page was read.
 *
 * @since 0.9.0
 */
public interface LockDirectory {

	/** The greatest page size {@link #locks(String, int)} accepts. */
	int MAX_PAGE_SIZE = 1000;

	/**
	 * One page of the locks in the store.
	 * @param cursor where to go on: {@code null} for the first page, else a previous page's
	 * {@link LockPage#nextCursor()}
	 * @param pageSize about how many locks a page lists, 1 to {@value #MAX_PAGE_SIZE}; the store's scan counts
	 * keys, not locks, so a page may list fewer (and, where a scan step returns more keys than asked, a few more)
	 * @return the locks of the page, and the cursor of the next page ({@code null} after the last)
	 * @throws IllegalArgumentException if the cursor is not one this directory returned, or the page size is out of
	 * range
	 * @throws LockUnavailableException if the store could not be reached
	 */
	LockPage locks(@Nullable String cursor, int pageSize);

}
