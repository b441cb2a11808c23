package dev.distlock.redis.internal.script;

import java.nio.charset.StandardCharsets;

/**
 * The arguments of the acquire and release scripts, encoded for the Lettuce-native path. Why a class: of the fourteen
 * arguments of an acquisition and its release, most are the same on nearly every call (the lease time, the receipt
 * time, the client id as waiter and releaser, the publish mode, an empty re-entry token, the label of a thread that
 * acquires again) or the same in an acquisition and the release that follows it (the owner id, the release channel),
 * and encoding each once instead of per call saves the client an array copy each. Racy but safe: the last encoded
 * value is an immutable pair, replaced when it differs, so a miss costs an encoding as before and never a wrong value.
 * <p>
 * The lease time and the receipt time have a slot each: in one slot they alternated on every acquire and release (the
 * receipt time is the command timeout, not the lease time) and were encoded on every call (issue 31). The owner id
 * and the channel have one slot each for the calls of one thread one after the other: an uncontended acquire and its
 * release; threads that interleave miss and encode, as before.
 */
public final class NativeScriptArgs {

	private static final byte[] EMPTY = new byte[0];

	/** The holds before the release of a lease held once: nearly every release. */
	private static final byte[] ONE = { '1' };

	private final byte[] publishMode;

	/** The lease time encoded last: the same for every call with the same lease time. */
	private final Slot ttl = new Slot();

	/** The receipt time encoded last: the same for every release with the same lease time. */
	private final Slot receipt = new Slot();

	/** The owner id encoded last: an acquisition's, which its release presents again. */
	private final Slot owner = new Slot();

	/** The release channel encoded last: the lock's that one thread acquires and releases. */
	private final Slot channel = new Slot();

	/** The client id encoded last: one per service. */
	private final Slot clientId = new Slot();

	/** The holder label encoded last: the same for one thread's acquisitions one after the other. */
	private final Slot label = new Slot();

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
		args[0] = this.owner.of(owner);
		args[1] = this.ttl.of(ttlMillis);
		args[2] = waiter.isEmpty() ? EMPTY : this.clientId.of(waiter);
		args[3] = (reenteredToken != 0) ? bytes(Long.toString(reenteredToken)) : EMPTY;
		args[4] = (reentryTarget > 0) ? bytes(Long.toString(reentryTarget)) : EMPTY;
		args[5] = this.publishMode;
		args[6] = label.isEmpty() ? EMPTY : this.label.of(label);
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
		return new byte[][] { this.owner.of(owner), bytes(Long.toString(token)), this.channel.of(channel),
				this.clientId.of(clientId), this.publishMode, (holdsBefore == 1) ? ONE : bytes(Long.toString(holdsBefore)),
				this.receipt.of(receiptMillis) };
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

	/**
	 * The value one argument had last and its encoding. Racy but safe: the pair is immutable and replaced whole when
	 * the value differs, so a thread that reads an older pair either uses it for its own value or encodes anew.
	 */
	private static final class Slot {

		private volatile Encoded last = new Encoded("", 0, EMPTY);

		byte[] of(String text) {
			Encoded current = this.last;
			if (!current.text().equals(text)) {
				current = new Encoded(text, 0, bytes(text));
				this.last = current;
			}
			return current.bytes();
		}

		byte[] of(long number) {
			Encoded current = this.last;
			if (current.number() != number || current.bytes().length == 0) {
				current = new Encoded("", number, bytes(Long.toString(number)));
				this.last = current;
			}
			return current.bytes();
		}

	}

	/** A value (a text, or a number) and its UTF-8 bytes; the bytes are never written after encoding. */
	private record Encoded(String text, long number, byte[] bytes) {
	}

}
