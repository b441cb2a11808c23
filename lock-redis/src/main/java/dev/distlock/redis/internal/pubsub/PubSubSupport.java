package dev.distlock.redis.internal.pubsub;

/** What the connections share: their log category, and how they tell a Redis that has no sharded pub/sub. */
final class PubSubSupport {

	/**
	 * The release subscriber's log category, as before the connections moved into this package, so that an
	 * application's logging settings for it still cover them. By name: the subscriber is in a package above this one.
	 */
	static final String LOG_CATEGORY = "dev.distlock.redis.ReleaseSubscriber";

	private PubSubSupport() {
	}

	/** Whether Redis answered that it does not know the command (SSUBSCRIBE before Redis 7.0). */
	static boolean isUnknownCommand(Throwable failure) {
		for (Throwable t = failure; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t.getMessage() != null && t.getMessage().contains("unknown command")) {
				return true;
			}
		}
		return false;
	}

}
