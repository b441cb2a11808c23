package dev.distlock.redis.internal.script;

import java.nio.charset.StandardCharsets;

/**
 * The arguments of the acquire and release scripts, encoded for the Lettuce-native path. Why a class: of the ten
 * arguments of an acquisition and its release, five are the same on nearly every call (the lease time, the client id
 * as waiter and releaser, the publish mode, an empty re-entry token, the label of a thread that acquires again), and
 * encoding them once instead of per call saves the client an array copy each. Racy but safe: the last encoded value is an immutable pair, replaced when it differs.
 */
public final class NativeScriptArgs {

	private static final byte[] EMPTY = new byte[0];

	private final byte[] publishMode;

	/** The lease time encoded last: the same for every call with the same lease time. */
	private volatile Encoded lastTtl = new Encoded(0, EMPTY);

	/** The client id encoded last: one per service. */
	private volatile Encoded lastClientId = new Encoded("", EMPTY);

	/** The holder label encoded last: the same for one thread's acquisitions one after the other. */
	private volatile Encoded lastLabel = new Encoded("", EMPTY);

	/**
	 * Encoder of one store's calls.
	 * @param publishMode {@link LockScripts#SHARDED} when releases are announced with {@code SPUBLISH}, else empty
	 */
	public NativeScriptArgs(String publishMode) {
		this.publishMode = bytes(publishMode);
	}

	/**
	 * ACQUIRE's ARGV, in the template path's order: owner, lease time, waiter (a client id or empty), the re-entered
	 * token (or empty), the hold count a re-entry is to reach (or empty), the publish mode, the holder's label (or
	 * empty), and, only when a waiter has waited at all (so a first attempt sends what it did), how long its process
	 * has waited (ARGV[8]), and only when there are any, the notes of other processes a release carried over to this
	 * one (ARGV[9], ARGV[8] then '' if it has not waited).
	 * @param owner the owner id
	 * @param ttlMillis the lease time in ms
	 * @param waiter the client id of a caller that will wait, else empty
	 * @param reenteredToken the token of the lease a re-entry re-enters, 0 for a new acquisition
	 * @param reentryTarget the hold count a re-entry is to reach, 0 for a new acquisition
	 * @param label the holder's label of a new hold, else empty
	 * @param waitedMillis how long the process's longest waiting caller has waited, in ms; 0 for not at all
	 * @param carried the carried notes ({@code <client id>=<since>,...}, see {@link LockScripts#ACQUIRE}), else empty
	 * @return the encoded ARGV
	 */
	public byte[][] acquire(String owner, long ttlMillis, String waiter, long reenteredToken, long reentryTarget,
			String label, long waitedMillis, String carried) {
		boolean waited = waitedMillis > 0 && !waiter.isEmpty();
		byte[][] args = new byte[!carried.isEmpty() ? 9 : waited ? 8 : 7][];
		args[0] = bytes(owner);
		args[1] = ttl(ttlMillis);
		args[2] = waiter.isEmpty() ? EMPTY : clientId(waiter);
		args[3] = (reenteredToken != 0) ? bytes(Long.toString(reenteredToken)) : EMPTY;
		args[4] = (reentryTarget > 0) ? bytes(Long.toString(reentryTarget)) : EMPTY;
		args[5] = this.publishMode;
		args[6] = label.isEmpty() ? EMPTY : label(label);
		if (args.length > 7) {
			args[7] = waited ? bytes(Long.toString(waitedMillis)) : EMPTY;
		}
		if (args.length > 8) {
			args[8] = bytes(carried);
		}
		return args;
	}

	/**
	 * ACQUIRE's ARGV for the template path, as {@link #acquire} encodes them.
	 * @param owner the owner id
	 * @param ttlMillis the lease time in ms
	 * @param waiter the client id of a caller that will wait, else empty
	 * @param reenteredToken the token of the lease a re-entry re-enters, 0 for a new acquisition
	 * @param reentryTarget the hold count a re-entry is to reach, 0 for a new acquisition
	 * @param publishMode {@link LockScripts#SHARDED} or empty
	 * @param label the holder's label of a new hold, else empty
	 * @param waitedMillis how long the process's longest waiting caller has waited, in ms; 0 for not at all
	 * @param carried the carried notes of other processes, else empty
	 * @return the ARGV
	 */
	public static String[] strings(String owner, long ttlMillis, String waiter, long reenteredToken, long reentryTarget,
			String publishMode, String label, long waitedMillis, String carried) {
		String reentered = (reenteredToken != 0) ? Long.toString(reenteredToken) : "";
		String target = (reentryTarget > 0) ? Long.toString(reentryTarget) : "";
		String waited = (waitedMillis > 0 && !waiter.isEmpty()) ? Long.toString(waitedMillis) : "";
		if (!carried.isEmpty()) {
			return new String[] { owner, Long.toString(ttlMillis), waiter, reentered, target, publishMode, label,
					waited, carried };
		}
		return !waited.isEmpty()
				? new String[] { owner, Long.toString(ttlMillis), waiter, reentered, target, publishMode, label, waited }
				: new String[] { owner, Long.toString(ttlMillis), waiter, reentered, target, publishMode, label };
	}

	/**
	 * RELEASE's ARGV: owner, token, channel, client id, publish mode, holds before, receipt time.
	 * @param owner the owner id
	 * @param token the lease's fencing token
	 * @param channel the release channel
	 * @param clientId the releasing process's client id
	 * @param holdsBefore the holds the owner counts before this release
	 * @param receiptMillis how long the receipt of a last release lasts, in ms
	 * @return the encoded ARGV
	 */
	public byte[][] release(String owner, long token, String channel, String clientId, long holdsBefore,
			long receiptMillis) {
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

	/**
	 * {@return the UTF-8 bytes of {@code value}}
	 * @param value a key or an argument
	 */
	public static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * {@return the UTF-8 bytes of each argument}
	 * @param args the arguments, in order
	 */
	public static byte[][] encode(String... args) {
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
