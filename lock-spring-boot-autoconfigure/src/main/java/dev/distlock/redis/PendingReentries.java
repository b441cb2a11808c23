package dev.distlock.redis;

/**
 * The re-entries of one lease that were sent and not answered yet, for the hold counts that a lease script is sent
 * (see "At least once" in the fault model of docs/architecture.md). A re-entry raises the count in Redis to a target
 * and never past it, so that it counts once however often it runs; concurrent re-entries of one owner must each have
 * their own target, which is the holds plus every re-entry on its way, this one included. A release counts down only
 * while Redis has at least the holds the owner counted before it: its holds and its re-entries on their way. So Redis
 * never counts fewer holds than the owner, and may count more (a re-entry whose caller gave up), which the owner's
 * last release ends with the lease.
 * <p>
 * Not thread-safe: guarded by the entry that owns it ({@link LeaseEntry}, {@link RedlockEntry}), with its holds.
 */
final class PendingReentries {

	private int count;

	/** {@return the count Redis is to reach with one more re-entry of a lease held {@code holds} times} */
	long reserve(int holds) {
		this.count++;
		return (long) holds + this.count;
	}

	/** The re-entry of {@link #reserve} was answered, counted or given up. */
	void answered() {
		this.count = Math.max(0, this.count - 1);
	}

	/** {@return the holds Redis counts at least while a release of one of {@code holds} is sent} */
	long holdsBeforeRelease(int holds) {
		return (long) holds + this.count;
	}

}
