package dev.distlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The rules that lock settings obey, each written once. {@link LockRequest}, the {@code distlock.*} properties, the
 * {@code @DistributedLock} declarations and the engines' builders all check through here, so a rule and its message
 * cannot drift apart between the API and the configuration.
 * <p>
 * Every {@code check} method returns the value it was given when it is valid, and otherwise throws an
 * {@link IllegalArgumentException} whose message starts with {@code subject}: the caller names the argument
 * ({@code "'keyPrefix'"}) or the property ({@code "distlock.key-prefix"}) the user has to change.
 *
 * @since 0.1.0
 */
public final class LockSettings {

	/** The rule of lease times, as the messages word it. */
	public static final String TTL_RULE = "must be at least 1ms";

	/**
	 * The longest lease time, and the longest extension or replacement of one: 365 days. Beyond it Redis's
	 * {@code PEXPIRE} overflows, or the scripts' Lua numbers turn into a form Redis does not take as an integer,
	 * after the script has written the hold: a hold without expiry. A lease is a bound on how long a crashed holder
	 * blocks the key; the watchdog renews a held lease however long it is held.
	 */
	public static final Duration MAX_TTL = Duration.ofDays(365);

	/**
	 * The most permits one key admits ({@link LockRequest#permits()}): each holder is a few fields of the key's hash,
	 * which every acquisition reads, so a limit much larger than this is better served by another design (a counter
	 * without per-holder leases).
	 * @since 0.8.0
	 */
	public static final int MAX_PERMITS = 10_000;

	/** The rule of {@link #MAX_TTL}, as the messages word it. */
	public static final String MAX_TTL_RULE = "must be at most 365 days";

	/** The rule of wait times, as the messages word it. */
	public static final String WAIT_TIME_RULE = "must not be negative";

	private static final Duration MIN_TTL = Duration.ofMillis(1);

	private LockSettings() {
	}

	/**
	 * Whether {@code ttl} is a valid lease time: at least 1ms, the resolution of the store's expiry, and at most
	 * {@link #MAX_TTL}.
	 * @param ttl the lease time to check, may be null
	 * @return true when it is a valid lease time
	 */
	public static boolean isValidTtl(@Nullable Duration ttl) {
		return ttlRule(ttl) == null;
	}

	/**
	 * The rule a lease time, or an extension of one, breaks: {@link #TTL_RULE} below 1ms (or null),
	 * {@link #MAX_TTL_RULE} beyond {@link #MAX_TTL}.
	 * @param ttl the lease time or extension to check, may be null
	 * @return the rule it breaks, or {@code null} when it is valid
	 */
	public static @Nullable String ttlRule(@Nullable Duration ttl) {
		if (ttl == null || ttl.compareTo(MIN_TTL) < 0) {
			return TTL_RULE;
		}
		return (ttl.compareTo(MAX_TTL) > 0) ? MAX_TTL_RULE : null;
	}

	/**
	 * Whether {@code waitTime} is a valid wait: zero (try once) or more.
	 * @param waitTime the wait to check, may be null
	 * @return true when it is a valid wait
	 */
	public static boolean isValidWaitTime(@Nullable Duration waitTime) {
		return waitTime != null && !waitTime.isNegative();
	}

	/**
	 * A lock key: not blank. A blank key would lock nothing that a reader of the code could name.
	 * @param key the lock key
	 * @param subject what the message names, e.g. the method or the property
	 * @return the key, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static String checkKey(@Nullable String key, String subject) {
		if (key == null || key.isBlank()) {
			throw invalid(subject, "must not be blank", (key != null) ? "'" + key + "'" : null);
		}
		return key;
	}

	/**
	 * A lock's metrics name: absent, or not blank (a blank tag value is rejected by most meter registries).
	 * @param name the metrics name, or null for none
	 * @param subject what the message names, e.g. the method or the property
	 * @return the name, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static @Nullable String checkName(@Nullable String name, String subject) {
		if (name != null && name.isBlank()) {
			throw invalid(subject, "must not be blank", "'" + name + "'");
		}
		return name;
	}

	/**
	 * The namespace of the lock keys in the store: not blank, and without braces, which would end the Redis Cluster
	 * hash tag that follows the prefix ({@code <prefix>:{<key>}}).
	 * @param keyPrefix the prefix of every lock key in the store
	 * @param subject what the message names, e.g. the property
	 * @return the prefix, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static String checkKeyPrefix(@Nullable String keyPrefix, String subject) {
		if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.contains("{") || keyPrefix.contains("}")) {
			throw invalid(subject, "must be non-blank and without braces", (keyPrefix != null) ? "'" + keyPrefix + "'" : null);
		}
		return keyPrefix;
	}

	/**
	 * A lease time: {@value #TTL_RULE}, and {@value #MAX_TTL_RULE} ({@link #MAX_TTL}).
	 * @param ttl the lease time
	 * @param subject what the message names, e.g. the method or the property
	 * @return the lease time, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static Duration checkTtl(@Nullable Duration ttl, String subject) {
		String rule = ttlRule(ttl);
		if (ttl == null || rule != null) {
			throw invalid(subject, (rule != null) ? rule : TTL_RULE, ttl);
		}
		return ttl;
	}

	/**
	 * The rule of a longest hold against the lease time, as the messages word it.
	 * @since 0.7.0
	 */
	public static final String MAX_HOLD_RULE = "must be at least the lease time";

	/**
	 * The rule a longest hold ({@code maxHold}) breaks: those of a lease time ({@link #ttlRule}: at least 1ms, at most
	 * {@link #MAX_TTL}), and {@link #MAX_HOLD_RULE}: a lease the watchdog would stop renewing before its first lease
	 * time ran out, or a fixed lease meant to outlive its cap, is a contradiction, not a cap.
	 * @param maxHold the longest hold to check, may be null
	 * @param ttl the lease time it caps
	 * @return the rule it breaks, or {@code null} when it is valid
	 * @since 0.7.0
	 */
	public static @Nullable String maxHoldRule(@Nullable Duration maxHold, Duration ttl) {
		String rule = ttlRule(maxHold);
		if (rule != null) {
			return rule;
		}
		return (maxHold.compareTo(ttl) < 0) ? MAX_HOLD_RULE + " (" + ttl + ")" : null;
	}

	/**
	 * A longest hold: {@link #maxHoldRule the rules} of a lease time, and at least {@code ttl}.
	 * @param maxHold the longest hold
	 * @param ttl the lease time it caps
	 * @param subject what the message names, e.g. the method, the key or the property
	 * @return the longest hold, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 * @since 0.7.0
	 */
	public static Duration checkMaxHold(@Nullable Duration maxHold, Duration ttl, String subject) {
		String rule = maxHoldRule(maxHold, ttl);
		if (maxHold == null || rule != null) {
			throw invalid(subject, (rule != null) ? rule : TTL_RULE, maxHold);
		}
		return maxHold;
	}

	/**
	 * The rule of a number of permits ({@link LockRequest#permits()}), or null when {@code permits} keeps it: from 1 to
	 * {@link #MAX_PERMITS} for a {@link LockMode#PERMITS} request, exactly 1 for every other mode.
	 * @param permits the number of permits
	 * @param mode the request's mode
	 * @return what is wrong, or null
	 * @since 0.8.0
	 */
	public static @Nullable String permitsRule(int permits, LockMode mode) {
		if (mode != LockMode.PERMITS) {
			return (permits == 1) ? null : "must be 1 for a " + mode.name().toLowerCase(java.util.Locale.ROOT)
					+ " lock (only a PERMITS request admits several holders)";
		}
		return (permits >= 1 && permits <= MAX_PERMITS) ? null : "must be between 1 and " + MAX_PERMITS;
	}

	/**
	 * A number of permits: {@link #permitsRule the rules}.
	 * @param permits the number of permits
	 * @param mode the request's mode
	 * @param subject what the message names, e.g. the method or the key
	 * @return the number, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 * @since 0.8.0
	 */
	public static int checkPermits(int permits, LockMode mode, String subject) {
		String rule = permitsRule(permits, mode);
		if (rule != null) {
			throw invalid(subject, rule, permits);
		}
		return permits;
	}

	/**
	 * A wait for a held key: {@value #WAIT_TIME_RULE}; zero tries once.
	 * @param waitTime the wait
	 * @param subject what the message names, e.g. the method or the property
	 * @return the wait, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static Duration checkWaitTime(@Nullable Duration waitTime, String subject) {
		if (waitTime == null || !isValidWaitTime(waitTime)) {
			throw invalid(subject, WAIT_TIME_RULE, waitTime);
		}
		return waitTime;
	}

	/**
	 * The part of the lease time after which a watchdog renews a held lease: between 0 and 1, both exclusive (at 0 it
	 * would renew without pause, at 1 only when the lease has already expired).
	 * @param renewalRatio the part of the lease time
	 * @param subject what the message names, e.g. the property
	 * @return the ratio, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static double checkRenewalRatio(double renewalRatio, String subject) {
		if (!(renewalRatio > 0 && renewalRatio < 1)) {
			throw invalid(subject, "must be between 0 and 1 (exclusive)", renewalRatio);
		}
		return renewalRatio;
	}

	/**
	 * How long a fair lock's queue entry lives without its waiter's keepalive: at least 30ms, at most
	 * {@link #MAX_TTL} (it is an expiry in Redis too). It bounds how long a waiter that died delays the next one.
	 * @param entryTtl the entry ttl
	 * @param subject what the message names, e.g. the property
	 * @return the duration, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static Duration checkFairEntryTtl(@Nullable Duration entryTtl, String subject) {
		if (entryTtl == null || entryTtl.compareTo(Duration.ofMillis(30)) < 0) {
			throw invalid(subject, "must be at least 30ms", entryTtl);
		}
		if (entryTtl.compareTo(MAX_TTL) > 0) {
			throw invalid(subject, MAX_TTL_RULE, entryTtl);
		}
		return entryTtl;
	}

	/**
	 * How long a release channel without waiters stays subscribed: not negative; zero unsubscribes at once.
	 * @param idleUnsubscribe how long an idle channel stays subscribed
	 * @param subject what the message names, e.g. the property
	 * @return the duration, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static Duration checkIdleUnsubscribe(@Nullable Duration idleUnsubscribe, String subject) {
		if (idleUnsubscribe == null || idleUnsubscribe.isNegative()) {
			throw invalid(subject, "must not be negative", idleUnsubscribe);
		}
		return idleUnsubscribe;
	}

	/**
	 * How many times in a row a released lease may go straight to a waiting thread of the same process: not
	 * negative; zero turns hand-overs off.
	 * @param localHandOvers the number of hand-overs in a row
	 * @param subject what the message names, e.g. the property
	 * @return the number, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static int checkLocalHandOvers(int localHandOvers, String subject) {
		if (localHandOvers < 0) {
			throw invalid(subject, "must not be negative", localHandOvers);
		}
		return localHandOvers;
	}

	/**
	 * How many replicas must acknowledge a new lease: not negative; zero waits for none.
	 * @param replicaAcks the number of replicas
	 * @param subject what the message names, e.g. the property
	 * @return the number, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static int checkReplicaAcks(int replicaAcks, String subject) {
		if (replicaAcks < 0) {
			throw invalid(subject, "must not be negative", replicaAcks);
		}
		return replicaAcks;
	}

	/**
	 * How long to wait for replicas to acknowledge a new lease: at least 1ms (Redis's {@code WAIT} with 0 would wait
	 * forever).
	 * @param timeout the wait
	 * @param subject what the message names, e.g. the property
	 * @return the wait, unchanged
	 * @throws IllegalArgumentException naming {@code subject}
	 */
	public static Duration checkReplicaAckTimeout(@Nullable Duration timeout, String subject) {
		if (timeout == null || timeout.toMillis() < 1) {
			throw invalid(subject, "must be at least 1ms", timeout);
		}
		return timeout;
	}

	private static IllegalArgumentException invalid(String subject, String rule, @Nullable Object value) {
		// a blank key may be line breaks: the message stays one line
		return new IllegalArgumentException(LogSafe.escape(subject + " " + rule + ", but was " + value));
	}

}
