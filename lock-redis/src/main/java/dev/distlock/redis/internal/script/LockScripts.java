package dev.distlock.redis.internal.script;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The lease scripts, each loaded once and run with {@code EVALSHA}: one round trip per operation, atomic on the server.
 * <p>
 * Data model: the lease is a hash. Each owner's field holds its hold count; the field {@value #TOKEN_FIELD} holds the
 * lease's fencing token, and {@value #LABEL_PREFIX}&lt;owner&gt; the owner's holder label. Fields starting with '~'
 * are the lease's notes, never an owner: every script that counts holds or lists owners skips them. The key is deleted when the last hold is released, so a free lock leaves nothing behind.
 * A new lease's token is the server's clock in microseconds: after a release or an expiry the clock has moved past
 * every token issued before, so tokens grow per key without a counter key that would never expire. Scripts that act on
 * a held lease check owner <em>and</em> token, so a stale handle can never touch a newer lease of the same owner.
 * <p>
 * The Lua of each script and shared part is a file of its own ({@link LuaSource}, named where the constant is
 * built); what it does, its keys, arguments and reply are documented here, on the constant.
 */
public final class LockScripts {

	/** The hash field that holds the fencing token; owner ids never start with '~'. */
	public static final String TOKEN_FIELD = "~t";

	/**
	 * The argument that makes a script announce a release with {@code SPUBLISH}, on the lease's shard of a Redis
	 * Cluster, where waiters subscribe with {@code SSUBSCRIBE} on the key's master. On Redis before 7.0, which knows no
	 * {@code SPUBLISH}, the script falls back to {@code PUBLISH}, as the subscriber falls back to {@code SUBSCRIBE} on
	 * the key's master.
	 */
	public static final String SHARDED = "s";

	/** The field FORCE_RELEASE adds to its reply, followed by Redis's error text, when the publish was refused. */
	public static final String PUBLISH_REFUSED_FIELD = "~!";

	/**
	 * The prefix of the hash fields that note a process waiting for the lease: {@code ~w:<client id>}. The value of an
	 * exclusive lease's note is when that process's longest waiting caller started to wait, in ms of the server's
	 * clock (the earliest any of its attempts reported while this lease lived); 1 in notes of versions before 0.8.0,
	 * which give no age.
	 */
	public static final String WAITER_PREFIX = "~w:";

	/**
	 * What separates the token of an exclusive release's message from the client id it names:
	 * {@code <token>><client id>}, the process whose note is the oldest among those of other processes (see
	 * {@link #RELEASE}), and that from the notes it carries over: {@code <token>><client id>><c1>=<since1>,...}. A
	 * message without it (no note with an age, or an older version) names nobody.
	 */
	public static final String NAMED_SEPARATOR = ">";

	/**
	 * The infix of a release receipt's key: {@code <lease>:r:<owner>}, in the lease's hash slot. When a script ends an
	 * owner's last hold it leaves this key behind for a short while (see {@link #RELEASE}), holding the token it
	 * released and what its reply said, so that the same call run a second time (a client that re-sends an unanswered
	 * command after a reconnect, a retrying proxy) answers as the first run did instead of finding the lease gone.
	 */
	public static final String RECEIPT_INFIX = ":r:";

	/** The hash field of an exclusive lease that names the last {@code add} extension applied (its call id). */
	public static final String EXTENDED_FIELD = "~a";

	/**
	 * The prefix of the hash fields that say who holds the lease: {@code ~l:<owner>} = that owner's holder label (the
	 * one-line form of {@code HolderLabel}, already escaped for a log line), for {@code holder(key)}, the store listing
	 * and a forced release's audit. Written by the script that creates the owner's hold, together with it, and removed
	 * with it: a re-entry, renewal or extension leaves it as it is, so a label costs one field per hold, not a write per
	 * call, and a label never outlives its owner's hold (a read lock that overlapping readers hold forever keeps one
	 * label per live reader). A lease written without one (an older version, an acquisition with an empty label) simply
	 * has none.
	 */
	public static final String LABEL_PREFIX = "~l:";

	/**
	 * {@return the release channel of the lease at {@code redisKey}}: the key with a suffix, so in the lease's hash
	 * slot (a sharded channel of a cluster goes to the key's own shard).
	 */
	public static String channel(String redisKey) {
		return redisKey + ":released";
	}

	/**
	 * Lua shared by the scripts that read labels: {@code labels(fields)}, from a lease's HGETALL, the labels of its
	 * holders (owner fields with a {@value #LABEL_PREFIX} field) joined by {@code "; "}: the writer of a read-write
	 * lease first, the others in the order of their text, at most {@value #LISTED_LABELS} and then
	 * {@code "and <n> more"}; '' when no holder has one. Sorted, so that the same holders read the same whichever
	 * order the hash keeps.
	 */
	public static final String LABELS = LuaSource.load("labels.lua");

	/** How many holders' labels {@link #LABELS} names before it counts the rest. */
	public static final int LISTED_LABELS = 5;

	/**
	 * Lua shared by the scripts that write: {@code n(x)} formats a number as an integer string, for every number a
	 * script hands to Redis (Redis 7.2.0 to 7.2.4 turn a Lua number with eight or more trailing zeros into scientific
	 * notation, which a string comparison of tokens then misses and {@code PEXPIRE} refuses, redis/redis#13113);
	 * {@code expire(key, ms, created, undo)} sets an expiry and, when Redis refuses it (an ACL without
	 * {@code pexpire}), deletes a key this call created, so that no script leaves a key without expiry, runs
	 * {@code undo} if given, and fails the script with Redis's error: it sends the refused command once more with
	 * {@code redis.call}, so that the error names this line, which names the command (see {@link ScriptCommands}). It
	 * returns nil, or Redis's error should the second call pass.
	 */
	public static final String PRELUDE = LuaSource.load("prelude.lua");

	/**
	 * The hash field that notes that the lease's holder may not announce its release: Redis (7.0 or later) told the
	 * acquiring script that the holder's user may not publish on the release channel.
	 */
	public static final String UNANNOUNCED_FIELD = "~u";

	/**
	 * Lua shared by the scripts that take a lease for a holder whose release other processes wait for:
	 * {@code unannounced(key, sharded)} tells whether the calling user may not announce the release of lease
	 * {@code key} (publish on {@code <key>:released}, with {@code SPUBLISH} when {@code sharded} is
	 * {@value #SHARDED}), asking Redis's ACL without sending anything ({@code redis.acl_check_cmd}); false on Redis
	 * before 7.0, which cannot tell a script.
	 */
	public static final String UNANNOUNCED = LuaSource.load("unannounced.lua");

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] ttl ms, ARGV[3] the caller's client id if it will wait, else '', ARGV[4]
	 * the token of the lease the caller holds and re-enters, or '' for a new acquisition, ARGV[5] for a re-entry the
	 * hold count the owner will have with it (its holds plus its re-entries on their way, this one included), else '',
	 * ARGV[6] {@value #SHARDED} when releases are announced with {@code SPUBLISH}, else empty or absent, ARGV[7] for a
	 * new acquisition the holder's label ({@value #LABEL_PREFIX}&lt;owner&gt;, written with the hold it creates; '' or
	 * absent writes none; a re-entry passes '' and never writes one), ARGV[8] when ARGV[3] is given, how many ms the
	 * longest waiting caller of that process has waited for this lock (absent or '': 0), ARGV[9] only when there are
	 * any, the notes of other processes that the release naming this process carried over ({@value #NAMED_SEPARATOR}
	 * in {@link #RELEASE}): {@code <client id>=<since>,...}, written into the lease when this call takes a free key
	 * or fails, each kept at the earliest like the own note and never one for the caller's own process, so that the
	 * named process's release finds them and names the next oldest (issue 31). Returns
	 * {hold count, fencing token} when acquired or re-entered, {0, remaining ttl ms of the holder} when another owner
	 * holds the lock, and {-1, 0} when a re-entry finds its lease gone; a caller that will wait is then noted in the
	 * lease ({@value #WAITER_PREFIX}&lt;client id&gt;), so that the holder knows other processes wait, and since when:
	 * the note holds the server's time in ms less ARGV[8], the earliest such time of that process's attempts (a retry,
	 * a later attempt, never makes it younger; so a second run writes nothing). Only this failure branch reads the
	 * clock for it: a free or re-entered lease costs what it did. A re-entry never shortens the lease.
	 * <p>
	 * A new lease whose holder's user may not publish on the release channel (asked with {@code redis.acl_check_cmd},
	 * Redis 7.0 or later; an ACL without {@code publish}, or without the channel) is noted as such
	 * ({@value #UNANNOUNCED_FIELD}): no message will tell of its release, so a caller that finds another owner holding
	 * it gets a third element, 1, {0, remaining ttl ms, 1}, and polls instead of waiting for the holder's lease time.
	 * <p>
	 * Owner ids are fresh per acquisition (see {@code RedisLockService}), so a hold of the owner that the caller does
	 * not re-enter can only come from an earlier attempt of the same acquisition whose reply was lost: it is adopted as
	 * a new lease (one hold, a greater token), never counted on. A re-entry counts only on the lease with the token the
	 * caller knows; it never creates a lease, so a late re-entry cannot leave a hold behind a lease that expired.
	 * <p>
	 * Run twice (see "At least once" in the fault model): a new acquisition adopts what its first run took; a
	 * re-entry raises the count to ARGV[5] only if it is lower, so its second run counts nothing more, and Redis never
	 * counts fewer holds than the owner (it may count more: those of re-entries whose replies were lost, which the
	 * owner's last release ends with the lease). The label goes with the hold: a second run that adopts the hold
	 * writes the same label again, and a run that finds another holder writes none.
	 * <p>
	 * The free-key path is the one nearly every uncontended acquisition takes, so it is kept to its five calls
	 * ({@code EXISTS}, {@code TIME}, {@code HSET}, the ACL check, {@code PEXPIRE}) and no more Lua than they need: the
	 * token stays a Lua number for the reply (formatted once, for the {@code HSET}), and the expiry is sent with ARGV[2]
	 * as the client sent it (an integer string, which {@code n} would only format again) under {@code redis.pcall};
	 * only a refused one goes through {@code expire}, which refuses it once more, deletes the key this call created and
	 * fails the script naming {@code pexpire}, as before. What each call costs Redis: {@code ScriptCosts} in
	 * lock-benchmarks (issue 31).
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> ACQUIRE = RedisScript.of(
			PRELUDE + UNANNOUNCED + LuaSource.load("lock-acquire.lua"), List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] release channel, ARGV[4] the owner's client id, ARGV[5]
	 * {@value #SHARDED} to announce the release with {@code SPUBLISH} on its shard (Redis Cluster), else empty (see
	 * {@link #SHARDED} for Redis before 7.0), ARGV[6] the holds the owner counts before this release (its holds plus its
	 * re-entries on their way), ARGV[7] how long in ms the receipt of a last release lasts. Returns {-1, 0} when the
	 * lease is not ours, otherwise {holds left, 0}; at zero holds the key is deleted, and the second element is 1 when
	 * another process had noted that it waits for the lock. One HGETALL reads token, hold count and waiter notes at
	 * once: a lease hash has a handful of fields.
	 * <p>
	 * Run twice, it answers as it did the first time (see "At least once" in the fault model): a release counts down
	 * only while Redis counts at least the holds the owner counted before it (ARGV[6]), so a second run finds one fewer
	 * and changes nothing; a last release leaves a receipt, {@code <lease>:r:<owner>} = {@code <token>:<others>}, for
	 * ARGV[7] ms (the client's command timeout, at most the lease time), and a second run that finds the lease gone
	 * answers from it, a release, not a loss. The receipt is written before the delete, so a Redis that refuses it (an
	 * ACL without {@code set}) refuses the release whole.
	 * <p>
	 * The release is published only when the lease holds a waiter note ({@value #WAITER_PREFIX}&lt;client id&gt;, of
	 * any process, this one's included, so that the rule does not depend on how a process wakes its own waiters). Every
	 * caller that will wait for a release message notes itself with every failed attempt (ACQUIRE's ARGV[3]), and only
	 * an attempt made once its channel is subscribed counts on the message; the notes live as long as the lease (a
	 * hand-over keeps them), so a release that finds none has nobody to wake and skips the publish (measured in
	 * docs/benchmarks.md, "Cheaper scripts"). A waiter whose note went with an expired lease retries when that lease
	 * would have run out, as its last attempt told it, and every wait ends with a last attempt at its deadline.
	 * DISCARD and FORCE_RELEASE always publish.
	 * <p>
	 * The message names the process that has waited longest (issue 31): its body is the token, followed by
	 * {@value #NAMED_SEPARATOR} and the client id of the oldest note of another process (the least time, see
	 * {@link #ACQUIRE}; notes without an age, 1, are never named); just the token when there is none. The named process
	 * tries at once and the others a moment later ({@code ReleaseSubscriber}), so that the longest waiting process
	 * almost always gets the lock while nothing is reserved for it in Redis: the key is free the moment it is deleted,
	 * whoever comes first takes it, and a named process without a waiter left stalls nobody for longer than that
	 * moment. When further notes of other processes have an age, the named one is followed by another
	 * {@value #NAMED_SEPARATOR} and those notes, oldest first, at most 16: {@code <client id>=<since>} joined by ','
	 * (client ids are URL-safe Base64, {@code OwnerIds}, so none holds '>', ',' or '='). The release deletes the hash
	 * and the notes with it; the named process writes them into the lease it takes ({@link #ACQUIRE}'s ARGV[9]), so
	 * that its own release names the next oldest rather than finding no note and letting it take the lock again at
	 * once. A carried note of a process that stopped waiting is named once and then gone. A second run answers from
	 * the receipt and publishes nothing, as before.
	 * <p>
	 * The delete comes first and the publish cannot undo it: when Redis refuses the publish (an ACL without the
	 * channel), the release has happened all the same, and the reply says so with a third element, Redis's error text
	 * ({0, others, error}), rather than failing a script whose write stays (see "Release notifications" in the fault
	 * model). A release that publishes nothing has nothing to be refused.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RELEASE = RedisScript.of(LuaSource.load("lock-release.lua"), List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] next owner, ARGV[4] next owner's ttl ms, ARGV[5] the next
	 * owner's label (or '': none). Hands a lease
	 * held once by its owner straight to another owner waiting in the same process: one round trip instead of a release,
	 * a publish and a new acquisition that waiters of other processes would race for. The new holder gets a greater
	 * token, as every new holder does, and its label replaces the owner's; notes of waiting processes stay. Returns the new token; -1 when the lease is not
	 * ours, -2 when the owner holds it more than once (the caller then releases normally). Run twice, the second run
	 * finds the lease the next owner's (its owner id is fresh, so only this hand-over or that waiter's own attempt gave
	 * it the lease) and answers its token.
	 */
	public static final RedisScript<Long> HAND_OVER = RedisScript.of(
			PRELUDE + LuaSource.load("lock-hand-over.lua"), Long.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] ms, ARGV[4] 'set' (expire in ms) or 'add' (add ms), ARGV[5]
	 * for 'add' a call id, fresh per call. Returns the new remaining ttl in ms, or -1 when the lease is not ours. An
	 * 'add' notes its call id in the lease ({@value #EXTENDED_FIELD}), so that a second run of the same call adds
	 * nothing and answers the remaining ttl; a 'set' run twice sets the same time again. Repeated adds never take the
	 * lease past 365 days from now ({@code LockSettings.MAX_TTL}).
	 */
	public static final RedisScript<Long> EXTEND = RedisScript.of(
			PRELUDE + LuaSource.load("lock-extend.lua"), Long.class);

	/**
	 * KEYS[1..n] leases; ARGV[3i-2..3i] owner, token, ttl ms of KEYS[i]. For each lease returns 1 when it is still
	 * ours (its expiry raised to at least ttl, never lowered, so an explicit extension survives) or 0 when it is gone.
	 * Owner and token are read with one HMGET: the server's time per lease is what bounds a renewal cycle of many
	 * leases, and three calls per lease cost about a quarter less than four. Run twice, it raises the same expiries
	 * again; the ttl goes to {@code PEXPIRE} as the client's string, never as a Lua number (see {@link #PRELUDE}).
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RENEW_ALL = RedisScript.of(LuaSource.load("lock-renew-all.lua"), List.class);

	/**
	 * KEYS[1] lease; ARGV[1] release channel, ARGV[2] {@value #SHARDED} or absent (as for RELEASE), ARGV[3] a call id,
	 * fresh per call, ARGV[4] how long its receipt lasts in ms. An operator's override: deletes the lease whoever holds
	 * it and publishes the release so waiters wake. Returns the deleted hash as {field, value, ...}, empty when there was
	 * no lease; when Redis refused the publish, the deleted hash is followed by the field
	 * {@value #PUBLISH_REFUSED_FIELD} and Redis's error text (the delete stands). The deleted hash is kept for ARGV[4]
	 * ms as the receipt {@code <lease>:f:<call id>}: the same call run a second time answers from it, and never deletes a
	 * lease taken after the first run. The message of a read-write lease (field {@code ~m}) or a semaphore (field
	 * {@code ~p}) starts with {@value ReadWriteScripts#WAKE_ALL}, so that it wakes every waiter of a process, as its own
	 * releases do.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> FORCE_RELEASE = RedisScript.of(
			LuaSource.load("lock-force-release.lua"), List.class);

	/**
	 * KEYS[1] lease. Reads who holds it, for {@code LockService.holder}: {holds, fencing token, remaining ttl ms,
	 * labels}, the holds summed over the owner fields (waiter notes, labels and the token start with '~'), the labels
	 * as {@link #LABELS} joins them ('' when none), or empty when the key is free. Reads only.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> HOLDER = RedisScript.of(
			LABELS + LuaSource.load("lock-holder.lua"), List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token. For {@code Lease.isOwned}: the remaining ttl in ms when the lease is
	 * still this owner's with this token, else -1. Reads only.
	 */
	public static final RedisScript<Long> OWNED = RedisScript.of(LuaSource.load("lock-owned.lua"), Long.class);

	private LockScripts() {
	}

}
