package dev.distlock.redis;

import java.nio.charset.StandardCharsets;

/**
 * The arguments of the acquire and release scripts, encoded for the Lettuce-native path. Why a class: of the ten
 * arguments of an acquisition and its release, five are the same on nearly every call (the lease time, the client id
 * as waiter and releaser, the publish mode, an empty re-entry token, the label of a thread that acquires again), and encoding them once instead of per call saves
 * the client an array copy each. Racy but safe: the last encoded value is an immutable pair, replaced when it differs.
 */
final class NativeScriptArgs {

	private static final byte[] EMPTY = new byte[0];

	private final byte[] publishMode;

	/** The lease time encoded last: the same for every call with the same lease time. */
	private volatile Encoded lastTtl = new Encoded(0, EMPTY);

	/** The client id encoded last: one per service. */
	private volatile Encoded lastClientId = new Encoded("", EMPTY);

	/** The holder label encoded last: the same for one thread's acquisitions one after the other. */
	private volatile Encoded lastLabel = new Encoded("", EMPTY);

	NativeScriptArgs(String publishMode) {
		this.publishMode = bytes(publishMode);
	}

	/**
	 * ACQUIRE's ARGV, in the template path's order: owner, lease time, waiter (a client id or empty), the re-entered
	 * token (or empty), the hold count a re-entry is to reach (or empty), the publish mode, the holder's label (or
	 * empty).
	 */
	byte[][] acquire(String owner, long ttlMillis, String waiter, long reenteredToken, long reentryTarget,
			String label) {
		return new byte[][] { bytes(owner), ttl(ttlMillis), waiter.isEmpty() ? EMPTY : clientId(waiter),
				(reenteredToken != 0) ? bytes(Long.toString(reenteredToken)) : EMPTY,
				(reentryTarget > 0) ? bytes(Long.toString(reentryTarget)) : EMPTY, this.publishMode,
				label.isEmpty() ? EMPTY : label(label) };
	}

	/** RELEASE's ARGV: owner, token, channel, client id, publish mode, holds before, receipt time. */
	byte[][] release(String owner, long token, String channel, String clientId, long holdsBefore, long receiptMillis) {
		return new byte[][] { bytes(owner), bytes(Long.toString(token)), bytes(channel), clientId(clientId),
				this.publishMode, bytes(Long.toString(holdsBefore)), ttl(receiptMillis) };
	}

	private byte[] ttl(long ttlMillis) {
		Encoded last = this.lastTtl;
		if (last.number() != ttlMillis || last.bytes().length == 0) {
			last = new Encoded(ttlMillis, bytes(Long.toString(ttlMillis)));
			this.lastTtl = last;
		}
		return last.bytes();
	}

	private byte[] clientId(String clientId) {
		Encoded last = this.lastClientId;
		if (!last.text().equals(clientId)) {
			last = new Encoded(clientId, bytes(clientId));
			this.lastClientId = last;
		}
		return last.bytes();
	}

	private byte[] label(String label) {
		Encoded last = this.lastLabel;
		if (!last.text().equals(label)) {
			last = new Encoded(label, bytes(label));
			this.lastLabel = last;
		}
		return last.bytes();
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/** {@return the UTF-8 bytes of each argument} */
	static byte[][] encode(String... args) {
		byte[][] argv = new byte[args.length][];
		for (int i = 0; i < args.length; i++) {
			argv[i] = bytes(args[i]);
		}
		return argv;
	}

	/** A value and its UTF-8 bytes; the bytes are never written after encoding. */
	private record Encoded(String text, long number, byte[] bytes) {

		Encoded(String text, byte[] bytes) {
			this(text, 0, bytes);
		}

		Encoded(long number, byte[] bytes) {
			this("", number, bytes);
		}

	}

}
