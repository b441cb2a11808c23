package dev.distlock.redis.internal.script;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts of fair locks ({@code LockMode.FAIR}). The lease itself is the plain lease hash of {@link LockScripts}
 * (owner field = hold count, {@code ~t} = token), so renewals, extensions, re-entries, ownership checks and the holder
 * query work on it unchanged. The queue of waiters of all processes lives next to it, in the same hash slot (the
 * lease key's hash tag):
 * <ul>
 * <li>{@code <lease>:q}, a sorted set: member = the waiter's future owner id, score = its ticket (enqueue order);</li>
 * <li>{@code <lease>:d}, a sorted set: member = owner id, score = the entry's deadline in server ms, pushed on by each
 * of the waiter's calls (its keepalive), so a dead waiter's entry is pruned within one entry ttl;</li>
 * <li>{@code <lease>:t}, a hash: owner id to the waiter's lease time, which caps what a hand-over grants, and
 * {@code ~l:<owner id>} to the waiter's holder label.</li>
 * </ul>
 * The label of a waiter is stored with its queue entry when it is queued, because a hand-over gives it the lease inside
 * another owner's script (a release, a leave) and its process may take the lease without another call: the handing
 * script moves the label from the entry into the lease ({@link LockScripts#LABEL_PREFIX}), with the hold it creates,
 * and removing the entry removes it. The alternative, the waiter writing its label when it takes the hand-over, would
 * leave the lease unlabelled until then, for ever if the waiter died in between.
 * The queue keys expire no sooner than one entry ttl after the last keepalive (never shortened, so processes with
 * different entry ttls can share a queue) and vanish with their last entry, so a free lock leaves nothing behind.
 * KEYS are always {lease, queue, deadlines, ttls}. A hand-over grants the head the shorter of
 * its lease time and what is left of its entry's deadline: a waiter that died after its last keepalive holds the lease
 * for at most one entry ttl; a live one raises it to its lease time with its first renewal.
 * <p>
 * The Lua is in {@code fair-*.lua} files ({@link LuaSource}); each constant documents its script.
 */
public final class FairScripts {

	/**
	 * The prefix of a hand-over message: {@code ~h:<token>:<new owner>}, published on the new owner's process's
	 * hand-over channel ({@link #handOverChannel}), so only the process of that waiter hears it.
	 */
	public static final String HAND_OVER_PREFIX = "~h:";

	/** Lua: prune queue entries whose deadline passed; defines {@code now} (server ms). */
	private static final String PRUNE = LockScripts.PRELUDE + LuaSource.load("fair-prune.lua");

	/**
	 * Lua: {@code handOn(previousToken, channel, sharded)}: give the free lease to the first live entry (deleting the
	 * current lease hash first) and tell it, or just delete the lease when no entry is live: every fair waiter is queued,
	 * and a waiter whose entry was pruned queues again with its next keepalive, so a release that hands nothing on has
	 * nobody to wake and publishes nothing. Returns the new owner, its token and Redis's error when it refused the
	 * publish, or nil; a refused expiry of the new lease fails the script (see {@link LockScripts#PRELUDE}).
	 */
	private static final String HAND_ON = LuaSource.load("fair-hand-on.lua");

	/**
	 * KEYS lease, queue, deadlines, ttls; ARGV[1] owner (fresh per acquisition), ARGV[2] ttl ms, ARGV[3] entry ttl ms,
	 * ARGV[4] '1' to queue when not acquired (a waiting caller), else '', ARGV[5] the holder's label ('' or absent:
	 * none), written with the hold the call creates or kept with its queue entry for a hand-over. Takes the lease when it is free and the queue
	 * is empty or the caller is its head; finds it taken when the lease was handed to the caller (or an earlier call's
	 * reply was lost), and then raises it to the caller's ttl. Otherwise queues the caller once (its ticket kept on later
	 * calls) and pushes its entry's deadline to now + entry ttl: the same call is the waiter's keepalive. Returns
	 * {1, token} when acquired, {0, holder's pttl (-2 free, queue ahead), position} otherwise (position 0 when not
	 * queued).
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> FAIR_ACQUIRE = RedisScript.of(
			PRUNE + LuaSource.load("fair-acquire.lua"), List.class);

	/**
	 * KEYS lease, queue, deadlines, ttls; ARGV[1] owner, ARGV[2] token, ARGV[3] release channel, ARGV[4]
	 * {@link LockScripts#SHARDED} or '', ARGV[5] the holds the owner counts before this release, ARGV[6] how long the
	 * receipt of a last release lasts in ms (both as for {@link LockScripts#RELEASE}). As RELEASE, but at zero holds the
	 * lease goes straight to the first live queue entry (greater token, a short grant, its entry removed) and the message
	 * {@value #HAND_OVER_PREFIX}token:owner names it, so that waiter enters without another round trip; with no live
	 * entry the lease is deleted. Returns {-1} not ours; {holds left} while held; {0, new token, new owner} handed over;
	 * {0, 0, ''} released; Redis's error as a fourth element when it refused the publish. Run twice, it answers as the
	 * first run did: a release counts down only while Redis counts the holds the owner counted before it, and a last
	 * release leaves the receipt {@code <lease>:r:<owner>} = {@code <token>:<new token>:<new owner>}.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> FAIR_RELEASE = RedisScript.of(
			PRUNE + HAND_ON + LuaSource.load("fair-release.lua"), List.class);

	/**
	 * KEYS lease, queue, deadlines, ttls; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@link LockScripts#SHARDED}
	 * or ''. A waiter that gives up (deadline, interrupt, cancel), and the reconciler's discard of a fair owner: removes
	 * its queue entry, and if the lease was handed to it meanwhile (or a lost reply left it a hold), passes the lease on
	 * to the next live entry in the same script. Returns 1 when it passed a lease on, else 0.
	 */
	public static final RedisScript<Long> FAIR_LEAVE = RedisScript.of(
			PRUNE + HAND_ON + LuaSource.load("fair-leave.lua"), Long.class);

	private FairScripts() {
	}

	/**
	 * {@return the four keys of a fair lock's scripts: lease, queue, deadlines, ttls}
	 * @param redisKey the lease's key
	 */
	public static List<String> keys(String redisKey) {
		return List.of(redisKey, queueKey(redisKey), redisKey + ":d", redisKey + ":t");
	}

	/**
	 * {@return the channel on which fair releases hand the lease to {@code owner}: the key's release channel and the
	 * owner's client id (owner ids start with it), so a hand-over wakes only the process of the waiter it names, in
	 * the key's hash slot (sharded pub/sub on a Cluster)}
	 * @param releaseChannel the key's release channel
	 * @param owner an owner id of the process
	 */
	public static String handOverChannel(String releaseChannel, String owner) {
		int end = owner.indexOf(':');
		return releaseChannel + ':' + ((end < 0) ? owner : owner.substring(0, end));
	}

	/**
	 * {@return the queue key of a fair lock (same hash slot as its lease)}
	 * @param redisKey the lease's key
	 */
	public static String queueKey(String redisKey) {
		return redisKey + ":q";
	}

}
