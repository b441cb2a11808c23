package dev.distlock.redis.internal.script;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts of a semaphore whose permits are leases ({@code LockMode.PERMITS}), each one round trip, atomic on the
 * server.
 * <p>
 * Data model: one hash, {@code <prefix>:{<key>}}, as for the other kinds, so that Cluster hash tags, the holder query,
 * the listing and the forced release work alike, and a semaphore nobody holds leaves nothing behind. It is the
 * read-write lease's hash ({@link ReadWriteScripts}, whose shared Lua these scripts use) without {@code ~m}, with:
 * <ul>
 * <li>{@code ~p}: the number of permits, set by the first holder; its presence marks a semaphore (the scripts of the
 * other kinds see one as held by another, and these see their leases so);</li>
 * <li>{@code <owner>}: the hold count of each holder (its re-entries; one permit whatever the count);</li>
 * <li>{@code ~e:<owner>}: that holder's deadline, the server's clock in ms: each permit ends on its own, so a crashed
 * holder's permit comes back at its lease time while others renew theirs; every script first drops the holders whose
 * deadline passed;</li>
 * <li>{@code ~k:<owner>}: that holder's fencing token, {@code max(~t + 1, TIME in µs)} at its acquisition, and
 * {@code ~t} the last token given: every permit's token is greater than every token given before it;</li>
 * <li>{@code ~w:<client id>}, {@code ~a:<owner>}, {@code ~l:<owner>}, {@code ~u}: as on a read-write lease.</li>
 * </ul>
 * While the semaphore has holders, an acquisition that asks for another number of permits is refused with the number
 * the holders set. Release messages start with {@code *} ({@link ReadWriteScripts#WAKE_ALL}): a permit given back may
 * let in any waiter, so every waiter of a process tries.
 * <p>
 * Every script gives the same answer when it runs twice (a reply lost and the command sent again): a new acquisition
 * whose owner already holds a permit answers that permit, a release answers from its receipt, an {@code add}
 * extension from its call id, as the other kinds' scripts do.
 * <p>
 * Only the acquisition is a script of its own ({@code permits-acquire.lua}, {@link LuaSource}): the release, the
 * extension, the ownership check, the renewal in batches and the discard of unknown holds are the read-write scripts,
 * which read a holder's own token where the hash has one ({@code ~k:<owner>}) and the lease-wide one otherwise; the
 * constants below name them for the semaphore's callers.
 */
public final class PermitScripts {

	/** {@link #ACQUIRE}'s first reply value when the semaphore's holders set another number of permits. */
	public static final long OTHER_LIMIT = -2;

	/**
	 * KEYS[1] semaphore; ARGV as {@link ReadWriteScripts#ACQUIRE}'s, but ARGV[3] the number of permits and ARGV[5] to
	 * ARGV[7] unused. A new acquisition: {1, token} when it got a permit (or its owner holds one already: a second run),
	 * {0, ms until the first holder's deadline} when every permit is held ({0, ms, 1} when a holder cannot announce its
	 * release, as for {@link ReadWriteScripts#ACQUIRE}), {{@value #OTHER_LIMIT}, the holders' number of permits} when it
	 * asked for another number, {0, pttl} when another kind of lease holds the key. A re-entry (ARGV[4] the permit's
	 * token): {holds, token}, or {-1, 0} when the permit is gone.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> ACQUIRE = RedisScript.of(
			ReadWriteScripts.COMMON + LockScripts.UNANNOUNCED + LuaSource.load("permits-acquire.lua"), List.class);

	/**
	 * The release of a permit: {@link ReadWriteScripts#RELEASE}, which knows a semaphore's hash (each holder's own
	 * token; every permit given back is announced). {holds left, ''} while holds are left, {0, the release message}
	 * when the permit was given back (published when another process waits; {0, message, error} when Redis refused the
	 * publish), the same from the receipt when it runs again, {-1, ''} when it is not ours.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RELEASE = ReadWriteScripts.RELEASE;

	/** The renewal of permits in batches: {@link ReadWriteScripts#RENEW_ALL}, which checks each holder's own token. */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RENEW_ALL = ReadWriteScripts.RENEW_ALL;

	/** The extension of a permit: {@link ReadWriteScripts#EXTEND}, which checks the holder's own token. */
	public static final RedisScript<Long> EXTEND = ReadWriteScripts.EXTEND;

	/** Whether a permit is still ours: {@link ReadWriteScripts#OWNED}, which checks the holder's own token. */
	public static final RedisScript<Long> OWNED = ReadWriteScripts.OWNED;

	private PermitScripts() {
	}

}
