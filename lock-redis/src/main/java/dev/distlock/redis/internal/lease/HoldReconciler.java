package dev.distlock.redis.internal.lease;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockListener.Abandonment;
import dev.distlock.core.LockListener;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.redlock.RedlockReconcilers;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.support.EngineThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Deletes holds that Redis may have although this process does not know them: a script the client stopped waiting for
 * (a timeout, a reset connection, a paused server) may still run, later, and create or keep a hold. The service hands
 * each such owner id here once nothing in the process uses it any more, or once the watchdog gave its lease up as lost
 * (whose holder's release finds it gone either way); the discard is retried until Redis answers,
 * then sent once more one command timeout later, for a script that reached Redis late on a connection that was replaced
 * meanwhile. What even that misses is a hold that nothing renews: it ends at its lease time.
 * <p>
 * No discard lives for ever: one that Redis refuses for good (an ACL without the scripts, WRONGTYPE on a key another
 * client wrote: see {@link RedisFailures#isPermanent}) ends at once, and one Redis does not answer ends once its
 * lease time has passed since it was handed here, as the hold it is for, renewed by nobody, has expired by then. Each
 * discard that ends so is logged (a refusal at WARN) and counted ({@link LockListener#discardAbandoned}), so a
 * refusal costs one call, not one every few seconds for as long as the process lives.
 * <p>
 * Safe at any moment because owner ids are fresh per acquisition and never reused once handed here (see
 * {@link ReadWriteScripts#DISCARD}).
 * <p>
 * Both engines clean up through it: the single-node engine with one per service, Redlock with one per node
 * ({@link RedlockReconcilers}), so a node that does not answer delays only its own discards.
 */
public final class HoldReconciler implements AutoCloseable {

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.HoldReconciler");

	/** Beyond this many pending discards new ones are dropped (with a warning): their holds end at their lease time. */
	static final int MAX_PENDING = 10_000;

	private static final long MIN_BACKOFF_MILLIS = 50;

	private static final long MAX_BACKOFF_MILLIS = 2_000;

	private final LeaseStore store;

	private final long confirmDelayMillis;

	/** How long a fair lock's queue entry lives without keepalive: the least life of a fair discard. */
	private final long fairEntryTtlMillis;

	private final List<LockListener> listeners;

	private final ScheduledExecutorService executor;

	private final AtomicInteger pending = new AtomicInteger();

	private final AtomicLong discarded = new AtomicLong();

	/**
	 * Whether a hold found and deleted is logged at INFO: on a single node it is news (a lost reply left it); Redlock
	 * also undoes here the grants of every attempt that missed the quorum, which contention makes routine (DEBUG).
	 */
	private final boolean deletionsAreNews;

	public HoldReconciler(LeaseStore store, long confirmDelayMillis, long fairEntryTtlMillis, List<LockListener> listeners,
			EngineThreads threads, String threadName) {
		this(store, confirmDelayMillis, fairEntryTtlMillis, listeners, threads, threadName, true);
	}

	public HoldReconciler(LeaseStore store, long confirmDelayMillis, long fairEntryTtlMillis, List<LockListener> listeners,
			EngineThreads threads, String threadName, boolean deletionsAreNews) {
		this.deletionsAreNews = deletionsAreNews;
		this.store = store;
		this.confirmDelayMillis = confirmDelayMillis;
		this.fairEntryTtlMillis = fairEntryTtlMillis;
		this.listeners = listeners;
		this.executor = Executors.newSingleThreadScheduledExecutor(threads.named(threadName));
	}

	/**
	 * Make sure the owner of {@code entry} holds nothing more of it (see {@link #discard(String, String, String, HolderLabel, String, boolean, long)}).
	 * Tried for as long as Redis may keep the lease: its ttl, or its last confirmed time if that is longer.
	 */
	public void discard(LeaseRecord entry, boolean fair) {
		discard(entry.key, entry.redisKey, entry.owner, entry.holder, entry.channel, fair, lifeMillis(entry));
	}

	/**
	 * Make sure {@code owner} holds nothing on {@code redisKey}, trying for {@code lifeMillis} at most. The caller
	 * must never use {@code owner} again. The log names the hold by its {@code holder}, never by its owner id.
	 */
	public void discard(String key, String redisKey, String owner, HolderLabel holder, String channel, boolean fair,
			long lifeMillis) {
		if (this.pending.incrementAndGet() > MAX_PENDING) {
			this.pending.decrementAndGet();
			abandoned(key, holder, Abandonment.TOO_MANY, "too many holds to reconcile (" + MAX_PENDING + ")");
			return;
		}
		long life = fair ? Math.max(lifeMillis, this.fairEntryTtlMillis) : lifeMillis;
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, life));
		schedule(new Discard(key, redisKey, owner, holder, channel, fair, 1, MIN_BACKOFF_MILLIS, deadline), 0);
	}

	/**
	 * Discard {@code entry}'s owner now, on the calling thread, where Redis has just answered; on failure as
	 * {@link #discard(LeaseRecord, boolean)}. Returns whether a hold was deleted.
	 */
	public boolean discardNow(LeaseRecord entry) {
		try {
			boolean deleted = this.store.discard(entry.redisKey, entry.owner, entry.channel);
			if (deleted) {
				deleted(entry.key, entry.holder);
			}
			return deleted;
		}
		catch (RuntimeException ex) {
			if (RedisFailures.isPermanent(ex)) {
				abandoned(entry.key, entry.holder, Abandonment.REFUSED, RedisFailures.describe(ex, entry.redisKey));
			}
			else {
				discard(entry, false);
			}
			return false;
		}
	}

	/** Discards not yet confirmed twice by Redis, nor given up. */
	public int pending() {
		return this.pending.get();
	}

	/** How many unknown holds were found and deleted so far. */
	long discarded() {
		return this.discarded.get();
	}

	private void schedule(Discard discard, long delayMillis) {
		try {
			this.executor.schedule(() -> attempt(discard), delayMillis, TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException ex) {
			this.pending.decrementAndGet(); // closed: the hold ends at its lease time
		}
	}

	private void attempt(Discard discard) {
		boolean deleted;
		try {
			deleted = discard.fair ? this.store.fair().leave(discard.redisKey, discard.owner, discard.channel)
					: this.store.discard(discard.redisKey, discard.owner, discard.channel);
		}
		catch (RuntimeException ex) {
			failed(discard, ex);
			return;
		}
		if (deleted) {
			deleted(discard.key, discard.holder);
		}
		if (discard.pass == 1) {
			schedule(discard.secondPass(), this.confirmDelayMillis);
		}
		else {
			this.pending.decrementAndGet();
		}
	}

	private void deleted(String key, HolderLabel holder) {
		this.discarded.incrementAndGet();
		if (this.deletionsAreNews) {
			logger.info("Deleted a hold of lock '" + LogSafe.escape(key) + "' (of " + holder
					+ ") that a call whose reply was lost had left in Redis");
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Deleted a hold of lock '" + LogSafe.escape(key) + "' (of " + holder
					+ ") that an attempt which missed the quorum, or a call whose reply was lost, had left on a node");
		}
	}

	/** A try that failed: retried with backoff, unless retrying cannot help or the hold has expired by now. */
	private void failed(Discard discard, RuntimeException ex) {
		if (RedisFailures.isPermanent(ex)) {
			this.pending.decrementAndGet();
			abandoned(discard.key, discard.holder, Abandonment.REFUSED, RedisFailures.describe(ex, discard.redisKey));
			return;
		}
		if (System.nanoTime() - discard.deadlineNanos >= 0) {
			this.pending.decrementAndGet();
			abandoned(discard.key, discard.holder, Abandonment.EXPIRED, RedisFailures.describe(ex, discard.redisKey));
			return;
		}
		long backoff = Math.min(MAX_BACKOFF_MILLIS, discard.backoffMillis * 2);
		logger.debug("Could not discard the unknown hold of lock '" + LogSafe.escape(discard.key)
				+ "' yet; retrying", ex);
		schedule(discard.retry(backoff), ThreadLocalRandom.current().nextLong(discard.backoffMillis / 2,
				discard.backoffMillis + 1));
	}

	private void abandoned(String key, HolderLabel holder, Abandonment reason, String detail) {
		String message = switch (reason) {
			case REFUSED -> "Redis refused to delete a hold of lock '" + key + "' (of " + holder + ") that a call "
					+ "whose reply was lost may have left; not retried, a hold that is there expires at its lease time: "
					+ detail;
			case EXPIRED -> "Gave up deleting a hold of lock '" + key + "' (of " + holder + ") that a call whose "
					+ "reply was lost may have left: Redis did not answer within its lease time, so it has expired ("
					+ detail + ")";
			case TOO_MANY -> "Too many holds to reconcile; the one of lock '" + key + "' (of " + holder
					+ ") ends at its lease time";
		};
		if (reason == Abandonment.EXPIRED) {
			logger.info(LogSafe.escape(message));
		}
		else {
			logger.warn(LogSafe.escape(message));
		}
		this.listeners.forEach(listener -> listener.discardAbandoned(key, reason, detail));
	}

	/** How long Redis may keep {@code entry}'s lease: its ttl, or its last confirmed time if that is longer. */
	private static long lifeMillis(LeaseRecord entry) {
		long confirmed = TimeUnit.NANOSECONDS.toMillis(entry.validUntilNanos() - System.nanoTime());
		return Math.max(entry.ttlMillis(), confirmed);
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

	/** One discard: {@code owner} is what Redis needs, {@code holder} what the log names. */
	private record Discard(String key, String redisKey, String owner, HolderLabel holder, String channel, boolean fair,
			int pass, long backoffMillis, long deadlineNanos) {

		Discard retry(long backoff) {
			return new Discard(this.key, this.redisKey, this.owner, this.holder, this.channel, this.fair, this.pass,
					backoff, this.deadlineNanos);
		}

		Discard secondPass() {
			return new Discard(this.key, this.redisKey, this.owner, this.holder, this.channel, this.fair, 2,
					MIN_BACKOFF_MILLIS, this.deadlineNanos);
		}

		/** Without the owner id, should a record's form ever reach a log. */
		@Override
		public String toString() {
			return "Discard[key=" + LogSafe.escape(this.key) + ", holder=" + this.holder + ", pass=" + this.pass + "]";
		}

	}

}
