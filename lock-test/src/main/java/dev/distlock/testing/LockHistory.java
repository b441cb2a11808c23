package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import dev.distlock.core.LockMode;

import org.jspecify.annotations.Nullable;

/**
 * What happened to the locks of an {@link InMemoryLockStore}, of every instance on it, in the order it happened:
 * acquisitions with the time they waited, waits that ended empty-handed or failed, releases with the time held,
 * losses, expiries, forced releases and the test's own orders. For a test to assert on after the fact, whatever
 * thread did what.
 * <p>
 * It keeps the latest {@value #CAPACITY} entries (older ones are dropped), so that an engine shared by a long test
 * suite does not grow without bound; {@link #clear()} starts afresh. Thread-safe.
 *
 * @since 0.1.0
 */
public final class LockHistory {

	/** How many entries are kept at most: the latest ones. */
	public static final int CAPACITY = 10_000;

	private final Deque<Entry> entries = new ArrayDeque<>();

	LockHistory() {
	}

	/** {@return every entry kept, oldest first} */
	public synchronized List<Entry> entries() {
		return List.copyOf(this.entries);
	}

	/**
	 * {@return the entries about {@code key}, oldest first}
	 * @param key the lock key as callers give it
	 */
	public synchronized List<Entry> entries(String key) {
		return this.entries.stream().filter((entry) -> entry.key().equals(key)).toList();
	}

	/**
	 * {@return the entries of one kind, oldest first}
	 * @param kind what happened
	 */
	public synchronized List<Entry> entries(Kind kind) {
		return this.entries.stream().filter((entry) -> entry.kind() == kind).toList();
	}

	/** Forget every entry kept so far. */
	public synchronized void clear() {
		this.entries.clear();
	}

	synchronized void record(Instant at, String key, Kind kind, String instance, @Nullable String owner,
			LockMode mode, long fencingToken, Duration duration, @Nullable String detail) {
		if (this.entries.size() == CAPACITY) {
			this.entries.removeFirst();
		}
		this.entries.addLast(new Entry(at, key, kind, instance, owner, mode, fencingToken, duration, detail));
	}

	@Override
	public synchronized String toString() {
		return "LockHistory[" + this.entries.size() + " entries]";
	}

	/**
	 * One thing that happened to a lock.
	 *
	 * @param at when it happened, on the store's clock
	 * @param key the lock key
	 * @param kind what happened
	 * @param instance the client id of the instance it happened to ({@code elsewhere} for the test's foreign holds)
	 * @param owner the owner id of the lease it is about, or null when there is none (an acquisition that waited in
	 * vain)
	 * @param mode the lock's mode
	 * @param fencingToken the lease's fencing token, or 0 when there is no lease
	 * @param duration how long: waited (for an acquisition or an ended wait), held (for a release, an expiry, a loss
	 * or a forced release), zero otherwise
	 * @param detail more, in words: why an acquisition failed, how a loss was noticed; or null
	 */
	public record Entry(Instant at, String key, Kind kind, String instance, @Nullable String owner, LockMode mode,
			long fencingToken, Duration duration, @Nullable String detail) {
	}

	/** What happened to a lock. */
	public enum Kind {

		/** A new lease was acquired, after waiting {@link Entry#duration()}. */
		ACQUIRED,

		/** An owner acquired a key it held again: one more hold of its lease. */
		REENTERED,

		/** An acquisition found the key held and started waiting for it. */
		WAITING,

		/** An acquisition ended without the key: it stayed held for the whole wait (or the wait was zero). */
		NOT_ACQUIRED,

		/** An acquisition failed: the store did not answer until its wait ended ({@link Entry#detail()} says). */
		FAILED,

		/** A waiting thread was interrupted. */
		INTERRUPTED,

		/** A waiting asynchronous acquisition was cancelled by its caller. */
		CANCELLED,

		/**
		 * A hold was released; {@link Entry#detail()} is {@code not owned} when the lease was gone already, and
		 * {@code not answered} when the store did not answer (the lease then expires at its lease time).
		 */
		RELEASED,

		/** A held lease was found lost; {@link Entry#detail()} names the {@code LockLostEvent.Detection}. */
		LOST,

		/** The store dropped a hold whose time ran out (a fixed lease, a lease nobody renewed). */
		EXPIRED,

		/** An operator (or the test) deleted the lease whoever held it. */
		FORCE_RELEASED,

		/** The test made another instance hold the key ({@link InMemoryLockStore#holdElsewhere}). */
		HELD_ELSEWHERE

	}

}
