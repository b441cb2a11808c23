package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;

import dev.distlock.core.LockMode;

import org.jspecify.annotations.Nullable;

/**
 * One holder of a key in the store: what the Redis engine keeps as a field of the lease hash (the writer or one reader
 * of a read-write lock, one holder of a permit, the one holder of any other), with its own hold count and expiry.
 * Guarded by the store's monitor.
 * <p>
 * Invariants: a hold is in its key's list of holders exactly while {@code gone} is false; once gone it never comes
 * back (a new acquisition is a new hold with a new owner id). {@code deadline} only moves when the store is told to:
 * by its renewer's watchdog, the holder's extension or re-entry, or a foreign holder's renewal.
 */
final class StoreHold {

	final String key;

	/** The owner id: the instance's client id and a number, fresh for each acquisition. */
	final String owner;

	/** The client id of the instance that holds it, or {@link ForeignHold#INSTANCE}. */
	final String instance;

	final LockMode mode;

	final long token;

	/** When it was created (its acquisition). */
	final Instant since;

	int count = 1;

	/** When the store drops it unless it is renewed, extended or released before. */
	Instant deadline;

	/**
	 * The engine's lease of this hold, whose watchdog renews it while it is held and auto-renewed; null for a foreign
	 * hold, and set to null when its instance let it go without the store hearing (an unanswered release): nothing
	 * renews it then, and it expires at its deadline.
	 */
	@Nullable LeaseEntry renewer;

	boolean gone;

	/**
	 * The holder's label as the store keeps it (the one-line form of its lease's {@code HolderLabel}), set when the
	 * engine makes the hold's lease; null for a foreign hold, which no engine labelled.
	 */
	@Nullable String label;

	StoreHold(String key, String owner, String instance, LockMode mode, long token, Instant since, Instant deadline) {
		this.key = key;
		this.owner = owner;
		this.instance = instance;
		this.mode = mode;
		this.token = token;
		this.since = since;
		this.deadline = deadline;
	}

	/** {@return the time left at {@code now}, never negative} */
	Duration remaining(Instant now) {
		Duration left = Duration.between(now, this.deadline);
		return left.isNegative() ? Duration.ZERO : left;
	}

	boolean isDue(Instant now) {
		return !this.deadline.isAfter(now);
	}

	@Override
	public String toString() {
		return "hold of '" + this.key + "' by " + this.owner + " (" + this.mode + ", token " + this.token + ", until "
				+ this.deadline + (this.gone ? ", gone" : "") + ")";
	}

}
