package dev.distlock.core;

/**
 * A release, renewal or extension found that the lease is no longer this owner's: it expired, was deleted, or was
 * taken over by another owner. Whatever the lease protected may have been entered by someone else meanwhile.
 *
 * @since 0.1.0
 */
public class LockNotOwnedException extends LockException {

	/** The owner that no longer holds the lease. */
	private final String owner;

	/**
	 * An exception for a lease on {@code key} that {@code owner} no longer holds.
	 * @param key the lock key as the caller gave it
	 * @param owner the owner id that no longer holds the lease
	 * @param message the detail message; name the holder by its {@link HolderLabel}, if at all, never by its owner id
	 */
	public LockNotOwnedException(String key, String owner, String message) {
		super(key, message, null);
		this.owner = owner;
	}

	/**
	 * {@return the owner id that no longer holds the lease, for code that compares it; the message does not contain
	 * it, and it does not belong in logs (see {@link Lease#owner()})}
	 */
	public String getOwner() {
		return this.owner;
	}

}
