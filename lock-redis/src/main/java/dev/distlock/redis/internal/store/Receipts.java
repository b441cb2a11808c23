package dev.distlock.redis.internal.store;

import java.util.concurrent.ThreadLocalRandom;

import dev.distlock.redis.internal.script.LockScripts;

/**
 * What lets a lease script that runs twice answer as it did the first time (see "At least once" in the fault model of
 * docs/architecture.md): how long a last release's receipt lasts in Redis, and the ids of calls whose second run must be
 * told from a new call.
 */
final class Receipts {

	/**
	 * The longest a release receipt lasts: a client re-sends after it reconnects, which takes milliseconds while Redis
	 * is reachable; the cap keeps the receipts of a hot key to a few thousand short-lived keys (one per last release)
	 * whatever the command timeout (Lettuce's default is 60 s).
	 */
	static final long MAX_MILLIS = 10_000;

	private Receipts() {
	}

	/**
	 * How long the receipt of a last release lasts in Redis (see {@link LockScripts#RELEASE}): as long as a client may
	 * still send the same call again, which is one command timeout ({@code timeoutMillis}, 0 where not known; a command
	 * past it is cancelled, not re-sent), and no longer than the lease time nor {@link #MAX_MILLIS}, at least one
	 * second. A second run that comes later finds no receipt and reports the lease lost: the conservative side.
	 */
	static long millis(long timeoutMillis, long ttlMillis) {
		long timeout = (timeoutMillis > 0) ? Math.min(timeoutMillis, MAX_MILLIS) : MAX_MILLIS;
		return Math.max(1_000, Math.min(timeout, ttlMillis));
	}

	/** {@return a fresh id for one call whose second run must be told from a new call: 64 random bits} */
	static String callId() {
		return Long.toHexString(ThreadLocalRandom.current().nextLong());
	}

}
