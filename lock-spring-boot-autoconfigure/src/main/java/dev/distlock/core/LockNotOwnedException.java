package dev.distlock.core;

/**
 * A release, renewal or extension found that the lease is no longer this owner's: it expired, was deleted, or was
 * taken over by another owner. Whatever the lease protected may have been entered by someone else meanwhile.
 *
 * @since 0.1.0
 */
public class LockNotOwnedException extends LockException {

	private final String owner;

	public LockNotOwnedException(String key, String owner, String message) {
		super(key, message, null);
		this.owner = owner;
	}

	/** The owner that no longer holds the lease. */
	public String getOwner() {
		return this.owner;
	}

}
