package dev.distlock.core;

import java.time.Instant;

/**
 * Published (as a Spring application event, and to every {@link LockListener}) when a held lease turns out to be lost
 * before its holder released it. From that moment another owner may hold the key, so the holder should stop or
 * compensate; storage writes guarded by the {@linkplain #fencingToken() fencing token} will be rejected.
 *
 * @param key the lock key
 * @param name the lock's name
 * @param owner the owner that lost it
 * @param fencingToken the lost lease's fencing token
 * @param detection how the loss was noticed
 * @param detectedAt when it was noticed
 * @since 0.1.0
 */
public record LockLostEvent(String key, String name, String owner, long fencingToken, Detection detection,
		Instant detectedAt) {

	/** How a lost lease was noticed. */
	public enum Detection {

		/** A watchdog renewal found the lease gone from the store, or owned by someone else. */
		RENEWAL_FOUND_GONE("a renewal found it gone from Redis"),

		/** The watchdog could not renew the lease for longer than its lease time (the store was unreachable). */
		RENEWAL_FAILED("it could not be renewed for longer than its lease time"),

		/** A fixed lease outlived its lease time before it was released. */
		EXPIRED("its fixed lease time ran out before it was released"),

		/** The holder's release, renewal or extension found the lease gone. */
		FOUND_GONE_BY_HOLDER("the holder found it gone from Redis"),

		/**
		 * The lease was held for its {@linkplain LockRequest#maxHold() longest hold}: the watchdog stopped renewing it
		 * and declared it lost, although the store may still have it until its lease time lapses or the holder's
		 * release deletes it. The holder was told (see {@link LockRequest#maxHold()}).
		 * @since 0.7.0
		 */
		MAX_HOLD_EXCEEDED("it was held for its longest hold (maxHold), so it is no longer renewed");

		private final String description;

		Detection(String description) {
			this.description = description;
		}

		/** {@return how the loss was noticed, in words, for logs and exception messages} */
		public String description() {
			return this.description;
		}

	}

}
