package dev.distlock.redis.internal.single;

/**
 * Redis answered an acquisition that the request itself is wrong (a semaphore asked for with another number of
 * permits than its holders'): final, unlike a failure of Redis, so the acquisition ends at once with this exception
 * instead of trying again until its deadline. Thrown by a lock kind from its acquire hook; Redis wrote nothing of the
 * attempt, so there is nothing to reconcile.
 */
public final class RequestRefused extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	/**
	 * A refusal with the message the caller reads.
	 * @param message what is wrong with the request, naming its key
	 */
	public RequestRefused(String message) {
		super(message);
	}

}
