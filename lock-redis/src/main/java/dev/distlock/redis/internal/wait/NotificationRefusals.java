package dev.distlock.redis.internal.wait;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.core.LockListener.Notification;
import dev.distlock.core.LockListener;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.store.RedisFailures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Release notifications that Redis refused (an ACL without the lock prefix's channels): one role, telling the
 * operator and the listeners. A refused subscription leaves its waiters polling every few tens of milliseconds, a
 * refused publish leaves a release unannounced (waiters in other processes find the lock free when they next poll):
 * locking stays correct, but every waiter polls, so the first refusal of each kind, and one every
 * {@value #WARN_INTERVAL_SECONDS} seconds after it, is logged at WARN with the rule to grant; every one is counted.
 */
public final class NotificationRefusals {

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.RedisLockService");

	private static final long WARN_INTERVAL_SECONDS = 10;

	private static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(WARN_INTERVAL_SECONDS);

	private final List<LockListener> listeners;

	/** When each kind was last logged at WARN (0: never), by {@link Notification} ordinal. */
	private final AtomicLong[] lastWarnNanos = { new AtomicLong(), new AtomicLong() };

	public NotificationRefusals(List<LockListener> listeners) {
		this.listeners = listeners;
	}

	/** Redis refused, with {@code errorReply}, to publish the release of the lock {@code key}. */
	public void publishRefused(String key, String redisKey, String channel, String errorReply) {
		String reason = RedisFailures.describeReply(errorReply, redisKey);
		refused(Notification.PUBLISH, channel, "Released lock '" + key + "', but Redis refused to announce the "
				+ "release on " + channel + "; waiters in other processes find the lock free when they next poll: "
				+ reason, reason);
	}

	/** Redis refused this process's subscription to {@code channel}. */
	void subscribeRefused(String channel, RuntimeException failure) {
		String redisKey = channel.endsWith(":released") ? channel.substring(0, channel.length() - ":released".length())
				: channel;
		String reason = RedisFailures.describe(failure, redisKey);
		refused(Notification.SUBSCRIBE, channel, "Redis refused the subscription to " + channel
				+ "; its waiters poll every few tens of milliseconds instead of hearing the release: " + reason, reason);
	}

	private void refused(Notification operation, String channel, String message, String reason) {
		AtomicLong last = this.lastWarnNanos[operation.ordinal()];
		long now = System.nanoTime();
		long before = last.get();
		if ((before == 0 || now - before >= WARN_INTERVAL_NANOS) && last.compareAndSet(before, (now == 0) ? 1 : now)) {
			logger.warn(LogSafe.escape(message));
		}
		else if (logger.isDebugEnabled()) {
			logger.debug(LogSafe.escape(message));
		}
		this.listeners.forEach(listener -> listener.notificationRefused(operation, channel, reason));
	}

}
