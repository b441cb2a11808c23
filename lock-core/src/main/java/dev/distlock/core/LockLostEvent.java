package dev.distlock.core;

import java.time.Instant;

/**
 * Published (as a Spring application event, and to every {@link LockListener}) when a held lease turns out to be lost
 * before its holder released it. From that moment another owner may hold the key, so the holder should stop or
 * compensate; storage writes guarded by the {@linkplain #fencingToken() fencing token} will be rejected.
 *
 * The {@linkplain #holder() holder} names who lost it, for logs and alerts; the {@linkplain #owner() owner id} is what
 * the store kept, which {@link #toString()} leaves out: log the holder, not the owner id.
 *
 * @param key the lock key
 * @param name the lock's name
 * @param owner the owner id that lost it (see {@link Lease#owner()}); not for logs
 * @param fencingToken the lost lease's fencing token
 * @param detection how the loss was noticed
 * @param detectedAt when it was noticed
 * @param holder who lost it: application, instance and owner description (see {@link Lease#holder()})
 * @since 0.1.0
 */
public record LockLostEvent(String key, String name, String owner, long fencingToken, Detection detection,
		Instant detectedAt, HolderLabel holder) {

	/**
	 * The loss of a lease whose holder is not known beyond its owner id: its {@link #holder()} is
	 * {@link HolderLabel#unknown()}. Engines give the holder.
	 * @param key the lock key
	 * @param name the lock's name
	 * @param owner the owner id that lost it
	 * @param fencingToken the lost lease's fencing token
	 * @param detection how the loss was noticed
	 * @param detectedAt when it was noticed
	 */
	public LockLostEvent(String key, String name, String owner, long fencingToken, Detection detection,
			Instant detectedAt) {
		this(key, name, owner, fencingToken, detection, detectedAt, HolderLabel.unknown());
	}

	/**
	 * The event without its owner id, which a release presents to the store: what a log line may show of it.
	 */
	@Override
	public String toString() {
		return "LockLostEvent[key=" + LogSafe.escape(this.key) + ", name=" + LogSafe.escape(this.name) + ", holder="
				+ this.holder + ", fencingToken=" + this.fencingToken + ", detection=" + this.detection
				+ ", detectedAt=" + this.detectedAt + "]";
	}

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
