package dev.distlock.redis.internal.wait;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.distlock.core.ForcedRelease;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.RedisFailures;
import org.jspecify.annotations.Nullable;

/**
 * An operator's override: deletes a lease whoever holds it, for a lock whose holder is stuck, and wakes the waiters of
 * this process at once. One role, kept apart from the holders' own paths: the holder finds its lease lost at its next
 * renewal or release.
 * <p>
 * The script returns the deleted hash, whichever kind of lease it was (see {@link LockScripts} for exclusive and fair
 * leases, {@link ReadWriteScripts} for read-write ones): the key is gone by the time the reply is read, so reading it
 * must not fail on a field it does not expect, or the release that happened would be reported as an error and its
 * waiters left asleep. Only owner fields (those not starting with '~') count as holders; their labels
 * ({@link LockScripts#LABEL_PREFIX}) name them in the release's report.
 */
public final class ForcedReleaser {

	/** The read-write lease's field that marks it as one (see {@link ReadWriteScripts}). */
	private static final String MODE_FIELD = "~m";

	/** The semaphore's field that marks it as one (see {@code PermitScripts}): its release wakes every waiter too. */
	private static final String PERMITS_FIELD = "~p";

	/** The read-write lease's field that names its writer. */
	private static final String WRITER_FIELD = "~x";

	private final LeaseStore store;

	private final ReleaseSubscriber subscriber;

	private final NotificationRefusals notifications;

	/** This process's client id: names the channel on which its fair waiters of a key wait. */
	private final String clientId;

	public ForcedReleaser(LeaseStore store, ReleaseSubscriber subscriber, NotificationRefusals notifications,
			String clientId) {
		this.store = store;
		this.subscriber = subscriber;
		this.notifications = notifications;
		this.clientId = clientId;
	}

	public Optional<ForcedRelease> forceRelease(String key, String redisKey) {
		String channel = LockScripts.channel(redisKey);
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
		Deleted deleted = new Deleted(fields);
		// the lock is free: a read-write lock admits every waiting reader now, an exclusive one the next waiter, a fair
		// one its queue's head (which may be any fair waiter of this process)
		this.subscriber.forceReleased(channel, deleted.readWrite);
		this.subscriber.forceReleased(FairScripts.handOverChannel(channel, this.clientId), true);
		if (deleted.publishRefused != null) {
			this.notifications.publishRefused(key, redisKey, channel, deleted.publishRefused);
		}
		if (deleted.owners.isEmpty()) {
			return Optional.empty(); // only notes of waiting writers: nobody held it
		}
		return Optional.of(new ForcedRelease(key, deleted.owners.get(0), deleted.holds, deleted.token, deleted.owners,
				deleted.labels()));
	}

	/** What the deleted hash held. */
	private static final class Deleted {

		final List<String> owners = new ArrayList<>(2);

		/** Owner id to label, for the owners stored with one. */
		final Map<String, String> labels = new HashMap<>(4);

		long holds;

		long token;

		boolean readWrite;

		@Nullable String publishRefused;

		Deleted(List<?> fields) {
			String writer = null;
			for (int i = 0; i + 1 < fields.size(); i += 2) {
				String field = String.valueOf(fields.get(i));
				String value = String.valueOf(fields.get(i + 1));
				if (LockScripts.TOKEN_FIELD.equals(field)) {
					this.token = number(value);
				}
				else if (LockScripts.PUBLISH_REFUSED_FIELD.equals(field)) {
					this.publishRefused = value;
				}
				else if (MODE_FIELD.equals(field) || PERMITS_FIELD.equals(field)) {
					this.readWrite = true; // several holders may come in: wake every waiter
				}
				else if (WRITER_FIELD.equals(field)) {
					writer = value;
				}
				else if (field.startsWith(LockScripts.LABEL_PREFIX)) {
					this.labels.put(field.substring(LockScripts.LABEL_PREFIX.length()), value);
				}
				else if (!field.startsWith("~")) {
					this.owners.add(field);
					this.holds += number(value);
				}
				// other '~' fields: waiter notes, a holder's deadline, a waiting writer's note
			}
			if (writer != null && this.owners.remove(writer)) {
				this.owners.add(0, writer); // a write lock names its writer first, then a reader it downgraded to
			}
		}

		/** {@return the labels of the owners that have one, in the order of {@link #owners}} */
		List<String> labels() {
			List<String> named = new ArrayList<>(this.owners.size());
			for (String owner : this.owners) {
				String label = this.labels.get(owner);
				if (label != null) {
					named.add(label);
				}
			}
			return named;
		}

		/**
		 * A count or token as the script stored it: an integer, or (from a Redis that formats large Lua numbers in
		 * scientific notation, 7.2.0 to 7.2.4) a number with an exponent; 0 when it is neither.
		 */
		private static long number(String value) {
			try {
				return Long.parseLong(value);
			}
			catch (NumberFormatException ex) {
				try {
					return new BigDecimal(value).longValue();
				}
				catch (NumberFormatException notANumber) {
					return 0;
				}
			}
		}

	}

}
