package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.core.LockMode;

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
 * </ul>
 * Tokens: a new exclusive, fair or write holder, and the first reader of a free key, take the next token of the store;
 * a reader that joins holders shares their token (a downgrade shares its writer's).
 */
final class KeyState {

	final String key;

	/** The holders, in the order they came; see {@link StoreHold}. */
	final List<StoreHold> holds = new ArrayList<>(2);

	/** The waiting acquisitions, in the order they came; see {@link Waiter}. */
	final List<Waiter> waiters = new ArrayList<>();

	/** The token of the current holders (the last one given out on this key). */
	long token;

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
	 * @param downgradeOf for a reader, the write hold its owner has on this key, or null
	 * @param asker the waiter asking, or null for a new attempt (which a fair acquisition makes behind the queue)
	 */
	boolean admits(LockMode mode, @Nullable StoreHold downgradeOf, Instant at, @Nullable Waiter asker) {
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
	 * stores it: a fair lock nobody waits for reads as exclusive; the waiting instances are those with a waiter that is
	 * not fair (the Redis engine's waiters' notes)}
	 */
	dev.distlock.core.StoredLock stored(Instant at) {
		StoreHold writer = writer();
		boolean read = this.holds.stream().anyMatch((hold) -> hold.mode == LockMode.READ);
		boolean fair = this.holds.stream().anyMatch((hold) -> hold.mode == LockMode.FAIR);
		int queue = fairQueueLength(at);
		LockMode mode = (writer != null) ? LockMode.WRITE
				: read ? LockMode.READ : (fair && queue > 0) ? LockMode.FAIR : LockMode.EXCLUSIVE;
		long waitingInstances = this.waiters.stream()
			.filter((waiter) -> waiter.mode() == LockMode.EXCLUSIVE && waiter.isAliveAt(at))
			.map((waiter) -> waiter.instance)
			.distinct()
			.count();
		return new dev.distlock.core.StoredLock(this.key, mode, holdCount(), remaining(at), this.token, labels(),
				(mode == LockMode.FAIR) ? queue : -1, (mode == LockMode.FAIR) ? -1 : (int) waitingInstances, 1);
	}

}
