package dev.distlock.redis;

import java.util.List;
import java.util.Optional;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.LockUnavailableException;

/**
 * An operator's override: deletes a lease whoever holds it, for a lock whose holder is stuck, and wakes the waiters of
 * this process at once. One role, kept apart from the holders' own paths: the holder finds its lease lost at its next
 * renewal or release.
 */
final class ForcedReleaser {

	private final LeaseStore store;

	private final ReleaseSubscriber subscriber;

	private final NotificationRefusals notifications;

	ForcedReleaser(LeaseStore store, ReleaseSubscriber subscriber, NotificationRefusals notifications) {
		this.store = store;
		this.subscriber = subscriber;
		this.notifications = notifications;
	}

	Optional<ForcedRelease> forceRelease(String key, String redisKey) {
		String channel = RedisLockService.channel(redisKey);
		List<?> fields;
		try {
			fields = this.store.forceRelease(redisKey, channel);
		}
		catch (RuntimeException ex) {
			throw RedisFailures.of(key, redisKey, "force-release", ex, "");
		}
		if (fields.isEmpty()) {
			return Optional.empty();
		}
		String owner = "";
		long holds = 0;
		long token = 0;
		for (int i = 0; i + 1 < fields.size(); i += 2) {
			String field = String.valueOf(fields.get(i));
			String value = String.valueOf(fields.get(i + 1));
			if (LockScripts.TOKEN_FIELD.equals(field)) {
				token = Long.parseLong(value);
			}
			else if (LockScripts.PUBLISH_REFUSED_FIELD.equals(field)) {
				this.notifications.publishRefused(key, redisKey, channel, value);
			}
			else if (!field.startsWith(LockScripts.WAITER_PREFIX)) {
				owner = field;
				holds = Long.parseLong(value);
			}
		}
		this.subscriber.releasedLocally(channel);
		return Optional.of(new ForcedRelease(key, owner, holds, token));
	}

}
