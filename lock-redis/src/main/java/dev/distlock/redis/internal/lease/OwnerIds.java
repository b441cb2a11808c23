package dev.distlock.redis.internal.lease;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.function.Supplier;

import dev.distlock.redis.internal.script.FairScripts;

/**
 * Fresh owner ids of one service: {@code <client id>:<22 characters>}, the client id and 128 bits from a
 * {@link SecureRandom}, URL-safe Base64, drawn anew for every acquisition.
 * <p>
 * An owner id is what a release, renewal or extension presents to Redis, so none may tell another. Ids made of the
 * client id, the thread and a counter did: one id, read in a log line, gave the instance's next ones. Random bits per
 * id do not; 128 of them also keep an id from ever being drawn twice for all practical purposes, which the engine
 * counts on (a discarded owner id is never used again, see the fault model in docs/architecture.md). The cost is one
 * {@code SecureRandom.nextBytes} of 16 bytes per new acquisition (re-entries reuse their lease's id), about a
 * microsecond (a sanity check in {@code OwnerIdsTests} prints it), next to a Redis round trip of a hundred or more.
 * A keyed hash of a counter under a per-instance secret would cost about as much and need a {@code Mac} per thread;
 * a {@code ThreadLocalRandom} is cheaper but predictable from a few of its outputs.
 * <p>
 * The ids keep the client id in front, up to the first ':', because the fair locks rely on it: a fair release hands
 * the lease to the waiter at the head of the queue and publishes that on the channel of the waiter's process, which
 * the scripts and {@link FairScripts#handOverChannel} read off the owner id. The client id alone lets nobody release a
 * lease. The random part is URL-safe Base64: no ':' and no leading '~' (the lease hash's own fields).
 */
public final class OwnerIds {

	private static final SecureRandom RANDOM = new SecureRandom();

	private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

	/** How many random bytes an owner id carries. */
	static final int RANDOM_BYTES = 16;

	private final String prefix;

	private final Supplier<String> randomParts;

	/** Owner ids of the service with client id {@code clientId}, each with a part of 128 random bits. */
	public OwnerIds(String clientId) {
		this(clientId, OwnerIds::randomPart);
	}

	/**
	 * Owner ids of the service with client id {@code clientId} whose part after it is {@code randomParts}'s: for tests
	 * that must know the next id in advance (to plant what a lost reply left in Redis).
	 */
	public OwnerIds(String clientId, Supplier<String> randomParts) {
		this.prefix = clientId + ":";
		this.randomParts = randomParts;
	}

	/** {@return an owner id never given before} */
	public String next() {
		return this.prefix.concat(this.randomParts.get());
	}

	/**
	 * {@return a new service's random client id: 128 random bits, as an owner id's own part} Both engines take theirs
	 * here, so no owner id of one service shares a prefix with another's.
	 */
	public static String newClientId() {
		return randomPart();
	}

	/** {@return 128 random bits, URL-safe Base64 without padding (22 characters)} */
	static String randomPart() {
		byte[] bytes = new byte[RANDOM_BYTES];
		RANDOM.nextBytes(bytes);
		return ENCODER.encodeToString(bytes);
	}

}
