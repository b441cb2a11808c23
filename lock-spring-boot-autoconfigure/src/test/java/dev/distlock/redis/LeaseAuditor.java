package dev.distlock.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.RedisServer;

/**
 * Compares, again and again while the chaos runs, what the services believe they hold with what the lock server holds,
 * read straight from the server (not through a proxy) in one atomic script. Two ways the pictures may drift:
 * <ul>
 * <li>a lease a service lists as held (not lost) that Redis does not have with its token: it must be released or
 * reported lost soon after, or turn out to be there;</li>
 * <li>a hold in Redis that no service knows with that token (a script that ran after its caller gave up): it must be
 * gone soon after, discarded or expired.</li>
 * </ul>
 * Both pictures are snapshots that race with releases, acquisitions and restarts, so a mismatch is only a suspect;
 * it is a violation when it is still there, freshly observed, {@code grace} after it was first seen. A grace of a lease
 * time plus a renewal period plus a margin covers every legitimate lag (a lease is never believed held for longer than
 * a lease time past its last successful renewal, and an unknown hold is renewed by no one), so a suspect that outlives
 * it is a picture that drifted for good.
 * <p>
 * A semaphore's hash (issue 30) holds a permit per holder, each a lease of its own with its token in
 * {@code ~k:<owner>}: each live one (its deadline {@code ~e:<owner>} not passed on the server's clock) is a hold here,
 * one whose deadline passed is none, whether a script dropped it yet or not; and more live holders than its permits
 * ({@code ~p}) is a violation at once.
 */
final class LeaseAuditor {

	private static final Duration READ_TIMEOUT = Duration.ofMillis(500);

	/**
	 * ARGV[1] a key pattern; returns {the server's clock in ms, key, {field, value, ...}, ...} for every matching hash,
	 * atomically. Release receipts ({@code <lease>:r:<owner>}, strings) match the pattern too and are left out: an
	 * HGETALL of one fails the whole script, which left most rounds unreadable while receipts lived.
	 */
	private static final String READ_ALL = """
			local clock = redis.call('time')
			local result = {tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)}
			for _, key in ipairs(redis.call('keys', ARGV[1])) do
			  if redis.call('type', key).ok == 'hash' then
			    result[#result + 1] = key
			    result[#result + 1] = redis.call('hgetall', key)
			  end
			end
			return result
			""";

	private final RedisServer server;

	private final List<RedisLockService> services;

	private final String keyPattern;

	private final long graceNanos;

	private final ChaosLedger ledger;

	private final Supplier<String> currentFault;

	/** Leases believed held but missing from Redis, by owner. Only the auditing thread touches these maps. */
	private final Map<String, Suspect> missing = new HashMap<>();

	/** Holds in Redis that no service knows, by owner and token. */
	private final Map<String, Suspect> unknown = new HashMap<>();

	private record Suspect(String key, String owner, long token, long firstSeenNanos, String fault) {
	}

	LeaseAuditor(RedisServer server, List<RedisLockService> services, String keyPattern, Duration grace,
			ChaosLedger ledger, Supplier<String> currentFault) {
		this.server = server;
		this.services = services;
		this.keyPattern = keyPattern;
		this.graceNanos = grace.toNanos();
		this.ledger = ledger;
		this.currentFault = currentFault;
	}

	/** One round: snapshot, read Redis, snapshot again, record new suspects and judge the old ones. */
	void check() {
		long started = System.nanoTime();
		Map<String, LeaseSnapshot> before = snapshot();
		Map<String, Hold> redis = readRedis();
		long read = System.nanoTime();
		Map<String, LeaseSnapshot> after = snapshot();
		this.ledger.count((redis != null) ? "audit.rounds" : "audit.rounds-unreadable");
		if (redis != null) {
			for (LeaseSnapshot lease : before.values()) {
				if (!lease.lost() && !redis.containsKey(id(lease.owner(), lease.fencingToken()))) {
					suspect(this.missing, lease.owner(), lease.key(), lease.owner(), lease.fencingToken(), read);
				}
			}
			for (Hold hold : redis.values()) {
				LeaseSnapshot known = after.get(hold.owner);
				if (known == null || known.fencingToken() != hold.token) {
					suspect(this.unknown, id(hold.owner, hold.token), hold.key, hold.owner, hold.token, read);
				}
			}
		}
		for (Iterator<Suspect> it = this.missing.values().iterator(); it.hasNext();) {
			Suspect suspect = it.next();
			LeaseSnapshot lease = after.get(suspect.owner);
			if (lease == null || lease.lost() || (redis != null && redis.containsKey(id(suspect.owner, suspect.token)))) {
				it.remove(); // released, reported lost, or there after all
			}
			else if (started - suspect.firstSeenNanos > this.graceNanos) {
				it.remove();
				this.ledger.violation("lease '" + suspect.key + "' (owner " + suspect.owner + ", token " + suspect.token
						+ ") was still believed held and not lost " + Duration.ofNanos(started - suspect.firstSeenNanos)
						+ " after Redis was seen without it (fault then: " + suspect.fault + ", now: "
						+ this.currentFault.get() + "; Redis now " + ((redis != null) ? "without it" : "unreadable") + ")");
			}
		}
		for (Iterator<Suspect> it = this.unknown.values().iterator(); it.hasNext();) {
			Suspect suspect = it.next();
			LeaseSnapshot lease = after.get(suspect.owner);
			if ((redis != null && !redis.containsKey(id(suspect.owner, suspect.token)))
					|| (lease != null && lease.fencingToken() == suspect.token)) {
				it.remove(); // gone, or its acquirer knows it now
			}
			else if (redis != null && started - suspect.firstSeenNanos > this.graceNanos) {
				it.remove();
				this.ledger.violation("Redis still held lease '" + suspect.key + "' (owner " + suspect.owner + ", token "
						+ suspect.token + ") that no service knows, " + Duration.ofNanos(started - suspect.firstSeenNanos)
						+ " after it was first seen (fault then: " + suspect.fault + ", now: " + this.currentFault.get() + ")");
			}
		}
	}

	/** Suspects still open: none once the services hold nothing and the keyspace is empty. */
	int openSuspects() {
		return this.missing.size() + this.unknown.size();
	}

	private void suspect(Map<String, Suspect> suspects, String id, String key, String owner, long token, long seen) {
		if (!suspects.containsKey(id)) {
			suspects.put(id, new Suspect(key, owner, token, seen, this.currentFault.get()));
			this.ledger.count((suspects == this.missing) ? "audit.suspects-missing" : "audit.suspects-unknown");
		}
	}

	/** Every listed lease of every service, lost or not, by owner. */
	private Map<String, LeaseSnapshot> snapshot() {
		Map<String, LeaseSnapshot> leases = new HashMap<>();
		for (RedisLockService service : this.services) {
			for (LeaseSnapshot lease : service.activeLeases()) {
				leases.put(lease.owner(), lease);
			}
		}
		return leases;
	}

	/** The holds in Redis by owner and token, or null when the server does not answer now (paused, restarting). */
	private Map<String, Hold> readRedis() {
		Object reply;
		try {
			reply = this.server.execute(READ_TIMEOUT, "EVAL", READ_ALL, "0", this.keyPattern);
		}
		catch (RuntimeException ex) {
			return null;
		}
		Map<String, Hold> holds = new HashMap<>();
		List<?> items = (List<?>) reply;
		long now = (Long) items.get(0);
		for (int i = 1; i + 1 < items.size(); i += 2) {
			String key = (String) items.get(i);
			List<?> fields = (List<?>) items.get(i + 1);
			if (fields.contains(PERMITS_FIELD)) {
				readPermits(key, fields, now, holds);
				continue;
			}
			String token = null;
			String owner = null;
			for (int f = 0; f + 1 < fields.size(); f += 2) {
				String field = (String) fields.get(f);
				if (field.equals(LockScripts.TOKEN_FIELD)) {
					token = (String) fields.get(f + 1);
				}
				else if (!field.startsWith("~")) {
					if (owner != null) {
						this.ledger.violation("Redis lease " + key + " has two owners: " + fields);
					}
					owner = field;
				}
			}
			// a hash without an owner would keep the lock from everyone until it expires: an unknown hold too
			owner = (owner != null) ? owner : "<no owner>";
			long parsed = (token != null) ? Long.parseLong(token) : -1;
			holds.put(id(owner, parsed), new Hold(key, owner, parsed));
		}
		return holds;
	}

	/** The field whose presence marks a semaphore, with its number of permits. */
	private static final String PERMITS_FIELD = "~p";

	/** Each live permit of a semaphore's hash as a hold of its own; more live holders than permits is a violation. */
	private void readPermits(String key, List<?> fields, long now, Map<String, Hold> holds) {
		Map<String, String> hash = new HashMap<>();
		for (int f = 0; f + 1 < fields.size(); f += 2) {
			hash.put((String) fields.get(f), (String) fields.get(f + 1));
		}
		int live = 0;
		for (Map.Entry<String, String> field : hash.entrySet()) {
			String owner = field.getKey();
			if (owner.startsWith("~")) {
				continue;
			}
			String deadline = hash.get("~e:" + owner);
			String token = hash.get("~k:" + owner);
			if (deadline == null || token == null) {
				this.ledger.violation("Redis semaphore " + key + " has holder " + owner + " without deadline or token: "
						+ fields);
				continue;
			}
			if (Long.parseLong(deadline) < now) {
				continue; // its permit ended: no hold, whether a script dropped it yet or not
			}
			live++;
			long parsed = Long.parseLong(token);
			holds.put(id(owner, parsed), new Hold(key, owner, parsed));
		}
		int permits = Integer.parseInt(hash.get(PERMITS_FIELD));
		this.ledger.count("audit.semaphores-read");
		if (live > permits) {
			this.ledger.violation("Redis semaphore " + key + " of " + permits + " permits had " + live
					+ " live holders at once: " + fields);
		}
	}

	private static String id(String owner, long token) {
		return owner + "/" + token;
	}

	private record Hold(String key, String owner, long token) {
	}

}
