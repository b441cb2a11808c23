package dev.distlock.redis.internal.store;

import java.util.Optional;

import dev.distlock.core.StoredLock;

/**
 * What a listing scans: one store's keys ({@link StoreScan}), or the Redlock nodes' together. Defined with the scan
 * so that the store needs nothing of the listing above it.
 */
public interface ListingSource {

	/** {@return the parts, in the order they are scanned, ascending} */
	int[] parts();

	/**
	 * One scan step on {@code part}.
	 * @param part the part to scan
	 * @param cursor the scan cursor, "0" to start the part
	 * @param count how many keys to ask for
	 * @return the step's outcome
	 */
	StoreScan.Step scan(int part, String cursor, int count);

	/**
	 * The lock at {@code redisKey}, found on {@code part}, if it should be listed there.
	 * @param part the part it was found on
	 * @param redisKey its key in Redis
	 * @return the lock, or empty when it is not to be listed there
	 */
	Optional<StoredLock> describe(int part, String redisKey);

}
