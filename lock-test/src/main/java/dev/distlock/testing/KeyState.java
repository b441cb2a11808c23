package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.core.LockMode;
import dev.distlock.core.LogSafe;

import org.jspecify.annotations.Nullable;

/**
 * The holders and waiters of one key, and the rules of who may hold it next: what the Redis engine's scripts decide
 * on the lease hash and its queue. Guarded by the store's monitor.
 * <p>
 * The rules, as the Redis engine has them ({@code LockScripts}, {@code FairScripts}, {@code ReadWriteScripts}):
 * <ul>
 * <li>an exclusive, fair or write lock is held by one holder, and only when nobody else holds the key in any mode;</li>
 * <li>readers share the key with each other; a reader is admitted when no writer holds it, except the reader whose
 * owner holds the write lock (a downgrade), and, unless it is such a downgrade, when no writer waits for the key (a
 * waiting writer keeps new readers out, so that a stream of readers cannot starve it);</li>
 * <li>fair waiters get the key in the order they came (FIFO); a new fair acquisition queues behind them even when the
 * key is free.</li>
 * <li>permits ({@code PermitScripts}): up to {@link #permits} holders of one owner each share the key, and nobody of
 * another mode; the first holder of a free key sets the number, and while anybody holds a permit a request that asks
 * for another number is refused ({@link #otherPermits}), never queued nor admitted.</li>
 * </ul>
 * Tokens: a new exclusive, fair or write holder, a new holder of a permit, and the first reader of a free key, take
 * the next token of the store; a reader that joins holders shares their token (a downgrade shares its writer's).
 */
final class KeyState {

	final String key;

	/** The holders, in the order they came; see {@link StoreHold}. */
	final List<StoreHold> holds = new ArrayList<>(2);

	/** The waiting acquisitions, in the order they came; see {@link Waiter}. */
	final List<Waiter> waiters = new ArrayList<>();

	/** The token of the current holders (the last one given out on this key). */
	long token;

	/**
	 * The number of permits its holders asked for, set by the first holder of a permit of the free key (as the Redis
	 * engine's {@code ~p}); it means something only while holders of permits hold the key.
	 */
	int permits;

	KeyState(String key) {
		this.key = key;
	}

	boolean isIdle() {
		return this.holds.isEmpty() && this.waiters.isEmpty();
	}

	/** {@return the hold counts of every holder, added up} */
	int holdCount() {
		int count = 0;
		for (StoreHold hold : this.holds) {
			count += hold.count;
		}
		return count;
	}

	/** {@return the time left of the holder that the store keeps longest} (the lease hash's expiry) */
	Duration remaining(Instant now) {
		Duration longest = Duration.ZERO;
		for (StoreHold hold : this.holds) {
			Duration left = hold.remaining(now);
			if (left.compareTo(longest) > 0) {
				longest = left;
			}
		}
		return longest;
	}

	@Nullable StoreHold writer() {
		for (StoreHold hold : this.holds) {
			if (hold.mode == LockMode.WRITE) {
				return hold;
			}
		}
		return null;
	}

	/**
	 * Whether the key admits a new holder of {@code mode} at {@code at}.
	 * @param permits for a {@link LockMode#PERMITS} request, its number of permits (the caller refused another number
	 * than the holders' before: {@link #otherPermits}); 1 otherwise
	 * @param downgradeOf for a reader, the write hold its owner has on this key, or null
	 * @param asker the waiter asking, or null for a new attempt (which a fair acquisition makes behind the queue)
	 */
	boolean admits(LockMode mode, int permits, @Nullable StoreHold downgradeOf, Instant at, @Nullable Waiter asker) {
		if (mode == LockMode.PERMITS) {
			for (StoreHold hold : this.holds) {
				if (hold.mode != LockMode.PERMITS) {
					return false; // a lock of another mode on the key
				}
			}
			return this.holds.size() < permits; // one permit per holder, its re-entries included
		}
		if (mode != LockMode.READ) {
			if (!this.holds.isEmpty()) {
				return false;
			}
			return mode != LockMode.FAIR || asker != null || !hasWaiting(LockMode.FAIR, at, null);
		}
		for (StoreHold hold : this.holds) {
			if (!hold.mode.isReadWrite()) {
				return false; // an exclusive or fair lease on the key: held by another
			}
		}
		StoreHold writer = writer();
		boolean downgrade = writer != null && writer == downgradeOf;
		if (writer != null && !downgrade) {
			return false;
		}
		return downgrade || !hasWaiting(LockMode.WRITE, at, asker);
	}

	/**
	 * {@return the number of permits the holders of the key set, when they hold permits and a {@code mode} request for
	 * {@code permits} asks for another number (the request is refused then); 0 when it may go on}
	 */
	int otherPermits(LockMode mode, int permits) {
		boolean semaphore = !this.holds.isEmpty() && this.holds.get(0).mode == LockMode.PERMITS;
		return (mode == LockMode.PERMITS && semaphore && this.permits != permits) ? this.permits : 0;
	}

	/** The refusal of a request that asks for {@code asked} permits of a semaphore of {@code held}: the Redis engine's. */
	static IllegalStateException refusedPermits(String key, int asked, int held) {
		return new IllegalStateException("Lock '" + LogSafe.escape(key) + "' is a semaphore of " + held
				+ " permits (set by its holders), but this request asks for " + asked + " permits: every request on "
				+ "one key must ask for the same number while it has holders");
	}

	/** Whether a waiter of {@code mode} other than {@code except} still waits at {@code at}. */
	boolean hasWaiting(LockMode mode, Instant at, @Nullable Waiter except) {
		for (Waiter waiter : this.waiters) {
			if (waiter != except && waiter.mode() == mode && waiter.isAliveAt(at)) {
				return true;
			}
		}
		return false;
	}

	/** {@return how many fair waiters wait at {@code at}} */
	int fairQueueLength(Instant at) {
		int queued = 0;
		for (Waiter waiter : this.waiters) {
			if (waiter.mode() == LockMode.FAIR && waiter.isAliveAt(at)) {
				queued++;
			}
		}
		return queued;
	}

	/**
	 * {@return the labels of its holders as the Redis engine reads them back: the writer's first, the others in the
	 * order of their text, at most five and then "and &lt;n&gt; more", joined by "; "; null when none has one}
	 */
	@Nullable String labels() {
		StoreHold writer = writer();
		List<String> labels = new ArrayList<>();
		this.holds.stream()
			.filter((hold) -> hold != writer && hold.label != null)
			.map((hold) -> hold.label)
			.sorted()
			.forEach(labels::add);
		if (writer != null && writer.label != null) {
			labels.add(0, writer.label);
		}
		if (labels.isEmpty()) {
			return null;
		}
		if (labels.size() > 5) {
			return String.join("; ", labels.subList(0, 5)) + "; and " + (labels.size() - 5) + " more";
		}
		return String.join("; ", labels);
	}

	/**
	 * {@return this key as a {@link dev.distlock.core.LockDirectory} lists it at {@code at}, as the Redis engine
	 * stores it: a fair lock nobody waits for reads as exclusive; a semaphore's holds are those of all its holders;
	 * the waiting instances are those with a waiter that is not fair (the Redis engine's waiters' notes: a semaphore
	 * notes only the waiters for its permits)}
	 */
	dev.distlock.core.StoredLock stored(Instant at) {
		StoreHold writer = writer();
		boolean read = this.holds.stream().anyMatch((hold) -> hold.mode == LockMode.READ);
		boolean fair = this.holds.stream().anyMatch((hold) -> hold.mode == LockMode.FAIR);
		boolean permits = this.holds.stream().anyMatch((hold) -> hold.mode == LockMode.PERMITS);
		int queue = fairQueueLength(at);
		LockMode mode = (writer != null) ? LockMode.WRITE : read ? LockMode.READ : permits ? LockMode.PERMITS
				: (fair && queue > 0) ? LockMode.FAIR : LockMode.EXCLUSIVE;
		LockMode noted = permits ? LockMode.PERMITS : LockMode.EXCLUSIVE;
		long waitingInstances = this.waiters.stream()
			.filter((waiter) -> waiter.mode() == noted && waiter.isAliveAt(at))
			.map((waiter) -> waiter.instance)
			.distinct()
			.count();
		return new dev.distlock.core.StoredLock(this.key, mode, holdCount(), remaining(at), this.token, labels(),
				(mode == LockMode.FAIR) ? queue : -1, (mode == LockMode.FAIR) ? -1 : (int) waitingInstances, 1);
	}

}
