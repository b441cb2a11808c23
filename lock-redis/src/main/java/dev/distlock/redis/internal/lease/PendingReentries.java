package dev.distlock.redis.internal.lease;

import dev.distlock.redis.internal.redlock.RedlockEntry;
import dev.distlock.redis.internal.single.LeaseEntry;

/**
 * The re-entries of one lease that were sent and not answered yet, for the hold counts that a lease script is sent
 * (see "At least once" in the fault model of docs/architecture.md). A re-entry raises the count in Redis to a target
 * and never past it, so that it counts once however often it runs; concurrent re-entries of one owner must each have
 * their own target, which is the holds plus every re-entry on its way, this one included. A release counts down only
 * while Redis has at least the holds the owner counted before it: its holds and its re-entries on their way. So Redis
 * never counts fewer holds than the owner, and may count more (a re-entry whose caller gave up), which the owner's
 * last release ends with the lease.
 * <p>
 * A re-entry that Redis counted moves from "on its way" to the holds in one step ({@link #counted}): counted in both
 * for a moment, a concurrent re-entry's target was one too high (Redis then counted a hold nobody took); counted in
 * neither, it was one too low (two re-entries shared one target, and Redis counted one hold fewer than the owner, whose
 * last releases would then have ended the lease while a hold of it was still in use).
 * <p>
 * Not thread-safe: guarded by the entry that owns it ({@link LeaseEntry}, {@link RedlockEntry}), with its holds.
 */
public final class PendingReentries {

	private int count;

	/** {@return one more re-entry of a lease held {@code holds} times, with the count Redis is to reach} */
	Reentry reserve(int holds) {
		this.count++;
		return new Reentry((long) holds + this.count);
	}

	/**
	 * The re-entry was counted: the caller adds its hold in the same step (under the same monitor). Does nothing when
	 * it was answered already.
	 */
	void counted(Reentry reentry) {
		answered(reentry);
	}

	/** The re-entry was answered without a hold to count, or given up; does nothing when it was answered already. */
	void answered(Reentry reentry) {
		if (!reentry.answered) {
			reentry.answered = true;
			this.count = Math.max(0, this.count - 1);
		}
	}

	/** {@return the holds Redis counts at least while a release of one of {@code holds} is sent} */
	long holdsBeforeRelease(int holds) {
		return (long) holds + this.count;
	}

	/** One re-entry on its way: the count it raises Redis to, and whether it left the ones on their way. */
	public static final class Reentry {

		public final long target;

		/** Guarded by the entry's monitor, as the re-entries are. */
		private boolean answered;

		Reentry(long target) {
			this.target = target;
		}

	}

}
