package dev.distlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Hears what happens to leases, for metrics, tracing and logs. Callbacks run on the thread that caused them (the
 * caller, or the watchdog for renewals and losses), so they must be quick and must not throw.
 *
 * @since 0.1.0
 */
public interface LockListener {

	/**
	 * A lease (or a re-entry of one) was acquired after waiting {@code waited}.
	 * @param request what was asked for
	 * @param lease the lease acquired
	 * @param waited how long the acquisition took
	 */
	default void acquired(LockRequest request, Lease lease, Duration waited) {
	}

	/**
	 * An acquisition ended without a lease after {@code waited}: the key stayed held ({@code failure} is null), the
	 * thread was interrupted, or the store could not be reached.
	 * @param request what was asked for
	 * @param waited how long the acquisition took
	 * @param failure why it failed, or {@code null} when the key stayed held for the whole wait
	 */
	default void notAcquired(LockRequest request, Duration waited, @Nullable RuntimeException failure) {
	}

	/**
	 * A hold was released after being held for {@code held}; {@code wasOwned} is false when the lease was gone.
	 * @param lease the hold released
	 * @param held how long it was held
	 * @param wasOwned whether the lease was still this owner's when released
	 */
	default void released(Lease lease, Duration held, boolean wasOwned) {
	}

	/**
	 * The watchdog renewed a lease ({@code success}) or failed to reach the store for it.
	 * @param name the lease's lock name
	 * @param success whether the renewal reached the store
	 */
	default void renewed(String name, boolean success) {
	}

	/**
	 * A held lease was found lost. Called just after the lease itself says so ({@link Lease#isLost()} is already true
	 * here, and a thread that sees it true may run before this call), so code that waits for the loss waits for the
	 * listener, not for the flag.
	 * @param event the loss, as it is published
	 */
	default void lost(LockLostEvent event) {
	}

	/**
	 * The store refused a release notification: this process may not subscribe to a lock's release channel (its
	 * waiters poll at short intervals instead of hearing the release), or a release could not announce itself (the
	 * lock was released all the same; waiters in other processes find it free when they next poll). A permission an
	 * operator should grant: the reference guide's "Security" page (docs/guide/security.md) gives the rule.
	 * @param operation what the store refused
	 * @param channel the release channel
	 * @param reason what was refused and what to grant, in words
	 * @since 0.1.0
	 */
	default void notificationRefused(Notification operation, String channel, String reason) {
	}

	/**
	 * The engine gave up deleting a hold that Redis may have of the lock {@code key} unknown to this process (left by
	 * a call whose reply was lost, see the fault model): Redis refused the delete for good (an ACL without the lock
	 * scripts, a value of another type at the key), did not answer within the hold's lease time (the hold has expired
	 * by then, as nothing renews it), or too many were pending. Such a hold, if there is one, ends at its lease time;
	 * nothing is retried. A refusal is one an operator should look at: the detail says what Redis answered.
	 * @param key the lock key
	 * @param reason why the delete was given up
	 * @param detail what Redis answered, or why it was not asked, in words
	 * @since 0.1.0
	 */
	default void discardAbandoned(String key, Abandonment reason, String detail) {
	}

	/** Why the engine gave up deleting a hold Redis may have unknown to this process. */
	enum Abandonment {

		/** Redis refused the delete, and retrying cannot help (an ACL, WRONGTYPE). */
		REFUSED,

		/** Redis did not answer within the hold's lease time: the hold has expired since. */
		EXPIRED,

		/** Too many deletes were pending; the hold ends at its lease time. */
		TOO_MANY

	}

	/** The two sides of a release notification. */
	enum Notification {

		/** Subscribing to a lock's release channel, to wait for its release. */
		SUBSCRIBE,

		/** Announcing a release on the lock's release channel. */
		PUBLISH

	}

}
