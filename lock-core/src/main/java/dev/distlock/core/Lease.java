package dev.distlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One hold of a lock. Close it (or {@link #release()} it) exactly once, on any thread; the owner it carries decides
 * whose hold is released.
 * <p>
 * The {@linkplain #fencingToken() fencing token} is what makes the lock safe for correctness, not just efficiency:
 * it grows with every new holder of the key, so a store that remembers the highest token it has seen can reject a
 * write from a holder that was paused past its lease.
 *
 * @since 0.1.0
 */
public interface Lease extends AutoCloseable {

	/** {@return the key as the caller gave it} */
	String key();

	/** {@return the name that groups this lock in metrics and logs} */
	String name();

	/**
	 * The owner id stored in the store for this hold, fresh for each acquisition (re-entries share it): for the Redis
	 * engines the service's random client id and 128 random bits, so that no id tells another. It is what a release
	 * presents to the store: keep it out of logs and messages, and name the holder by {@link #holder()} instead.
	 * @return the owner id
	 */
	String owner();

	/**
	 * Who holds this lease, in words for log lines and messages: the application, the instance and the owner's
	 * description as they were when the lease was acquired (re-entries share it). Unlike {@link #owner()} it is safe
	 * to log. Engines override it; this default knows nothing of the owner ({@link HolderLabel#unknown()}).
	 * @return the holder's label
	 * @since 0.7.0
	 */
	default HolderLabel holder() {
		return HolderLabel.unknown();
	}

	/**
	 * {@return a number that is the same across re-entries of one lease and strictly greater for every later holder of
	 * the key}
	 */
	long fencingToken();

	/** {@return the lease time this hold asked for} */
	Duration ttl();

	/** {@return whether the watchdog renews this lease while it is held} */
	boolean isAutoRenewed();

	/**
	 * Whether this hold is still ours as far as this process knows: not released, not lost, and (for a fixed lease)
	 * not past its lease time. It does not ask the store.
	 * @return whether this hold is still ours
	 */
	boolean isHeld();

	/**
	 * {@return whether the lease was found to be lost: gone from the store, or not renewable for longer than its lease
	 * time}
	 */
	boolean isLost();

	/**
	 * Ask the store whether this lease is still ours, with its fencing token (redis-py's {@code owned()}, redsync's
	 * {@code Valid()}): one round trip unless this hold was released or the lease is already known to be lost. A lease
	 * the store no longer has is marked lost exactly as the watchdog would mark it: {@link LockLostEvent}, listeners,
	 * and {@link LockLostException} at release. A confirmation also moves {@link #validUntil()} forward.
	 * @return true when the store still has this lease as ours
	 * @throws LockUnavailableException if the store did not answer (nothing is concluded then)
	 */
	boolean isOwned();

	/**
	 * How long this lease is valid at least, as last confirmed by the store (redsync's {@code Until()}): from the
	 * acquisition, the last renewal, extension or {@link #isOwned()} answer, counted from when that call was sent. It
	 * never asks the store, and it is in the past once this hold was released or the lease was lost.
	 * @return the moment until which the store is known to keep the lease
	 */
	Instant validUntil();

	/**
	 * Add {@code extra} to the lease's remaining time; the same as {@code extend(extra, ExtendMode.ADD)}.
	 * @param extra the time to add; at least 1ms, at most {@link LockSettings#MAX_TTL}
	 * @throws LockNotOwnedException if the lease is no longer ours, released by this hold included
	 * ({@link LockLostException} when it was already lost)
	 */
	default void extend(Duration extra) {
		extend(extra, ExtendMode.ADD);
	}

	/**
	 * Add {@code time} to the lease's remaining time ({@link ExtendMode#ADD}), or set the remaining time to exactly
	 * {@code time} ({@link ExtendMode#REPLACE}), which may shorten it. After a replace, {@code time} is the lease time
	 * the watchdog renews an auto-renewed lease to; a renewal already on its way may still leave the lease its former
	 * time once.
	 * @param time the time to add or to set; at least 1ms, at most {@link LockSettings#MAX_TTL}
	 * @param mode whether to add or to replace
	 * @throws IllegalArgumentException if {@code time} is under 1ms or over {@link LockSettings#MAX_TTL} (365 days, where
	 * Redis's expiry may overflow) or {@code mode} is null, naming the key
	 * @throws LockNotOwnedException if the lease is no longer ours, released by this hold included
	 * ({@link LockLostException} when it was already lost)
	 * @throws LockUnavailableException if the store did not answer
	 */
	void extend(Duration time, ExtendMode mode);

	/**
	 * Reset the lease's remaining time to its full {@link #ttl()}.
	 * @throws LockNotOwnedException if the lease is no longer ours, released by this hold included
	 * ({@link LockLostException} when it was already lost)
	 */
	void renew();

	/**
	 * Release this hold; the key is freed when its last hold is released.
	 * @throws LockNotOwnedException if the lease was no longer ours ({@link LockLostException} when the watchdog
	 * had already found it lost, whether or not the store answers the release), also when this hold was already
	 * released; the hold counts as released either way
	 * @throws LockUnavailableException if the store did not answer and the lease was not known to be lost; the hold
	 * counts as released, and what the store may still have of the lease expires at its lease time
	 */
	void release();

	/** Release this hold unless it was already released. */
	@Override
	void close();

	/**
	 * Release this hold without blocking the calling thread, for reactive and asynchronous holders. The future fails
	 * as {@link #release()} would throw. Engines whose store has a non-blocking client override it; this default
	 * releases on the calling thread.
	 * @return a future completed once the store answered (or the release failed)
	 * @since 0.6.0
	 */
	default CompletableFuture<Void> releaseAsync() {
		try {
			release();
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Be told when this lease is found lost while held, so that work that is not confined to a thread (a reactive
	 * stream, a future) can stop: {@code action} runs at most once, on an engine thread, and not at all if the hold is
	 * released first. Registering on a lease already lost runs it at once.
	 * @param action what to run with the loss
	 * @throws UnsupportedOperationException if the engine cannot tell a holder of a loss
	 * @since 0.6.0
	 */
	default void onLost(Consumer<LockLostEvent> action) {
		throw new UnsupportedOperationException(getClass().getName() + " does not tell its holder of a loss");
	}

}
