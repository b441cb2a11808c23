package dev.distlock.redis.internal.script;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts of read-write locks ({@code LockMode.READ} and {@code WRITE}), each one round trip, atomic on the server.
 * <p>
 * Data model: the lease is one hash, {@code <prefix>:{<key>}}, as for an exclusive lock, so that Cluster hash tags, the
 * holder query and the forced release work alike, and a free lock leaves nothing behind. Its fields:
 * <ul>
 * <li>{@code ~m}: {@code w} while a writer holds it, else {@code r}; its presence marks a read-write lease (an
 * exclusive lease on the same key has none, and the scripts then treat it as held by another);</li>
 * <li>{@code ~x}: the writer's owner id, while a writer holds it;</li>
 * <li>{@code ~t}: the fencing token (see below);</li>
 * <li>{@code <owner>}: the hold count of each holder, the writer and every reader (owner ids are fresh per
 * acquisition, so a writer's downgrade is a reader with an owner id of its own);</li>
 * <li>{@code ~e:<owner>}: that holder's deadline, the server's clock in ms: each holder's lease ends on its own, so a
 * dead reader stops counting at its ttl while others renew theirs; every script that looks at the holders first
 * drops those whose deadline passed;</li>
 * <li>{@code ~q:<owner>}: a writer that waits, until the deadline it holds (refreshed by each of its attempts): while a
 * live one exists, new readers are refused, so a stream of readers cannot starve a writer, and the note of a writer
 * that died ends by itself;</li>
 * <li>{@code ~w:<client id>}: a process with a caller (reader or writer) that failed to acquire and waits for a release
 * message, as on an exclusive lease; a release that frees the lock publishes only when the lease holds one (or a
 * waiting writer's note), and its message wakes every waiter of a process;</li>
 * <li>{@code ~a:<owner>}: the call id of that holder's last {@code add} extension;</li>
 * <li>{@code ~l:<owner>}: that holder's label ({@link LockScripts#LABEL_PREFIX}), written with its hold by the
 * acquisition that creates it and removed with it (a release, a discard, or the pruning of an expired hold, which
 * also drops a label whose hold is gone), so that a read lock that overlapping readers hold forever keeps one label
 * per live reader, not one per reader that ever came.</li>
 * </ul>
 * The key's expiry is kept at the latest deadline, and the key is deleted once no holder and no note is live.
 * <p>
 * Tokens: every new writer sets {@code ~t} to {@code max(previous + 1, TIME in µs)}, so tokens grow with every
 * writer, also across a free lock. Readers share the token of the read phase they join: the first reader after a free
 * lock or a writer's end starts a phase with a new token in the same way; a writer's downgrade keeps its token. A
 * reader's token therefore names the last state written before its read, never more than the next writer's.
 * <p>
 * Release messages on the lock's channel start with {@code *}: the lock may admit several waiters at once (all the
 * waiting readers), so they wake every waiter of a process, not one.
 * <p>
 * The Lua is in {@code read-write-*.lua} files ({@link LuaSource}); each constant documents its script.
 */
public final class ReadWriteScripts {

	/** The first character of a read-write release message: wake every waiter of the channel. */
	public static final String WAKE_ALL = "*";

	/**
	 * Shared Lua: the clock, the parse of the hash, the removal of holders and notes whose deadline passed, the expiry
	 * at the latest deadline (or the delete when nothing live is left), and the publish of a release. The semaphore's
	 * scripts ({@link PermitScripts}) share it: the same hash, with a limit and each holder's own token.
	 */
	static final String COMMON = LockScripts.PRELUDE + LuaSource.load("read-write-common.lua");

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] ttl ms, ARGV[3] {@code r} or {@code w}, ARGV[4] the token of the hold the
	 * caller re-enters or '' for a new acquisition, ARGV[5] and ARGV[6] for a reader: the owner id and token of the
	 * write lease its {@code LockOwner} holds (a downgrade), else '', ARGV[7] for a writer that will wait: how long its
	 * note lasts in ms, else '', ARGV[8] for a re-entry the hold count it is to reach (as for
	 * {@link LockScripts#ACQUIRE}), ARGV[9] '1' when a caller that is refused will wait for a release message (its
	 * process is then noted, {@code ~w:<client id>}, the owner id's first part), ARGV[10] {@value LockScripts#SHARDED}
	 * when releases are announced with {@code SPUBLISH}, else empty or absent, ARGV[11] for a new acquisition the
	 * holder's label, written with the hold it creates ('' or absent: none). Returns {holds, token} when acquired or
	 * re-entered, {0, ms after which to try again} when refused, {-1, 0} when a re-entry finds its hold gone. A new
	 * writer whose user may not announce its release is noted as such ({@value LockScripts#UNANNOUNCED_FIELD}, as for
	 * {@link LockScripts#ACQUIRE}), and a reader it keeps out gets a third element, 1, so that it polls instead of
	 * waiting for the writer's lease time (a refused writer retries within a third of its note's life anyway).
	 * <p>
	 * A reader is refused while another owner writes (unless it is that writer's downgrade) and, as a new reader, while
	 * a writer waits; a writer is refused while anyone else holds the lock, and then notes that it waits. A hold of the
	 * caller's owner id that the caller does not re-enter comes from an earlier attempt of the same acquisition whose
	 * reply was lost: it is adopted (one hold, its label written again, the same). A re-entry never creates a hold,
	 * nor shortens one, nor writes a label.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> ACQUIRE = RedisScript.of(
			COMMON + LockScripts.UNANNOUNCED + LuaSource.load("read-write-acquire.lua"), List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] release channel, ARGV[4] {@value LockScripts#SHARDED} or ''
	 * (as for {@link LockScripts#RELEASE}), ARGV[5] the holds the owner counts before this release, ARGV[6] how long the
	 * receipt of a last release lasts in ms. Returns {-1, ''} when the hold is not ours (gone, or its deadline passed),
	 * else {holds left, message}: at zero the owner's hold ends, and when that frees the lock for others (no holder left,
	 * or the writer gone while its downgrade reads on) the message is the second element ('' when the lock is not free
	 * for others): it is published when a process noted that it waits ({@code ~w:}) or a writer waits ({@code ~q:}), and
	 * the releasing process wakes its own waiters with it either way. A refused publish appends Redis's error as a third element; the release stands.
	 * Run twice, it answers as the first run did (as {@link LockScripts#RELEASE}: the count goes down only while Redis
	 * counts the holds the owner counted before, and a last release leaves the receipt {@code <lease>:r:<owner>} =
	 * {@code <token>:<message>}). It releases a semaphore's permit too ({@link PermitScripts}): the token checked is
	 * the holder's own ({@code ~k:<owner>}), and every permit given back frees the semaphore for others.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RELEASE = RedisScript.of(
			COMMON + LuaSource.load("read-write-release.lua"), List.class);

	/**
	 * KEYS[1..n] leases; ARGV[3i-2..3i] owner, token, ttl ms of KEYS[i], as {@link LockScripts#RENEW_ALL}. For each
	 * returns 1 when the hold is still ours (its deadline raised to at least now + ttl, the key's expiry to at least that
	 * deadline) or 0 when it is gone or its deadline passed. One HMGET a lease: no scan of the other holders. A
	 * semaphore's permit is checked against its holder's own token ({@code ~k:<owner>}, {@link PermitScripts}).
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RENEW_ALL = RedisScript.of(
			LuaSource.load("read-write-renew-all.lua"), List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] ms, ARGV[4] {@code set} or {@code add}, ARGV[5] for
	 * {@code add} a call id, as {@link LockScripts#EXTEND} for this holder's own deadline (the call id noted in
	 * {@code ~a:<owner>}, so that a second run adds nothing). Returns the new remaining ms of the hold, -1 when it is not
	 * ours. A semaphore's permit is checked against its holder's own token ({@link PermitScripts}).
	 */
	public static final RedisScript<Long> EXTEND = RedisScript.of(
			COMMON + LuaSource.load("read-write-extend.lua"), Long.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token (a semaphore's permit: its holder's own, {@link PermitScripts}). The
	 * remaining ms of the hold when it is still ours, else -1.
	 */
	public static final RedisScript<Long> OWNED = RedisScript.of(LuaSource.load("read-write-owned.lua"), Long.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@value LockScripts#SHARDED} or ''. The discard
	 * of both kinds of lease, for holds the client does not know about (those a script created after the client gave
	 * up on its reply); safe at any time because an owner id is never used again once its acquisition failed or its
	 * lease ended. On an exclusive lease it deletes the lease if {@code owner} holds it, whatever its hold count and
	 * token, and publishes the release (a refused publish does not undo the delete); on a read-write lease it removes only this owner's hold and waiting-writer note, never other readers' holds, and
	 * publishes when that frees the lock for others (as RELEASE) or removes a note that held readers back. Returns 1
	 * when a hold was deleted, else 0.
	 */
	public static final RedisScript<Long> DISCARD = RedisScript.of(
			COMMON + LuaSource.load("read-write-discard.lua"), Long.class);

	private ReadWriteScripts() {
	}

}
