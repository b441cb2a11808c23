package dev.distlock.core;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One page of a {@link LockDirectory}'s listing.
 *
 * @param locks the locks of the page, in the store's scan order
 * @param nextCursor the cursor of the next page, or {@code null} when this was the last
 * @since 0.9.0
 */
public record LockPage(List<StoredLock> locks, @Nullable String nextCursor) {

	/**
	 * A page.
	 * @param locks the locks of the page
	 * @param nextCursor the next page's cursor, or {@code null}
	 */
	public LockPage {
		Assert.notNull(locks, "'locks' must not be null");
		locks = List.copyOf(locks);
	}

	/** {@return whether another page follows} */
	public boolean hasNext() {
		return this.nextCursor != null;
	}

}
