package dev.distlock.redis;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
 * Safe at any moment because owner ids are fresh per acquisition and never reused once handed here (see
 * {@link ReadWriteScripts#DISCARD}).
 */
final class HoldReconciler implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(HoldReconciler.class);

	/** Beyond this many pending discards new ones are dropped (with a warning): their holds end at their lease time. */
	static final int MAX_PENDING = 10_000;

	private static final long MIN_BACKOFF_MILLIS = 50;

	private static final long MAX_BACKOFF_MILLIS = 2_000;

	private final LeaseStore store;

	private final long confirmDelayMillis;

	private final ScheduledExecutorService executor;

	private final AtomicInteger pending = new AtomicInteger();

	private final AtomicLong discarded = new AtomicLong();

	HoldReconciler(LeaseStore store, long confirmDelayMillis, EngineThreads threads, String threadName) {
		this.store = store;
		this.confirmDelayMillis = confirmDelayMillis;
		this.executor = Executors.newSingleThreadScheduledExecutor(threads.named(threadName));
	}

	/**
	 * Make sure {@code owner} holds nothing on {@code redisKey}. The caller must never use {@code owner} again.
	 */
	void discard(String key, String redisKey, String owner, String channel) {
		discard(key, redisKey, owner, channel, false);
	}

	/**
	 * As {@link #discard}; for a fair lock ({@code fair}) with {@link FairScripts#FAIR_LEAVE}: the owner's queue entry
	 * goes, and a lease it holds is handed on to the next live waiter rather than deleted (the queue stays).
	 */
	void discard(String key, String redisKey, String owner, String channel, boolean fair) {
		if (this.pending.incrementAndGet() > MAX_PENDING) {
			this.pending.decrementAndGet();
			logger.warn("Too many holds to reconcile; the one of lock '" + key + "' (owner " + owner
					+ ") ends at its lease time");
			return;
		}
		schedule(new Discard(key, redisKey, owner, channel, fair, 1, MIN_BACKOFF_MILLIS), 0);
	}

	/**
	 * Discard now, on the calling thread, where Redis has just answered; on failure as {@link #discard}. Returns
	 * whether a hold was deleted.
	 */
	boolean discardNow(String key, String redisKey, String owner, String channel) {
		try {
			boolean deleted = this.store.discard(redisKey, owner, channel);
			if (deleted) {
				this.discarded.incrementAndGet();
				logger.info("Deleted a hold of lock '" + key + "' (owner " + owner
						+ ") that a call whose reply was lost had left in Redis");
			}
			return deleted;
		}
		catch (RuntimeException ex) {
			discard(key, redisKey, owner, channel);
			return false;
		}
	}

	/** Discards not yet confirmed twice by Redis. */
	int pending() {
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
			long backoff = Math.min(MAX_BACKOFF_MILLIS, discard.backoffMillis * 2);
			logger.debug("Could not discard the unknown hold of lock '" + discard.key + "' yet; retrying", ex);
			schedule(discard.retry(backoff), ThreadLocalRandom.current().nextLong(discard.backoffMillis / 2,
					discard.backoffMillis + 1));
			return;
		}
		if (deleted) {
			this.discarded.incrementAndGet();
			logger.info("Deleted a hold of lock '" + discard.key + "' (owner " + discard.owner
					+ ") that a call whose reply was lost had left in Redis");
		}
		if (discard.pass == 1) {
			schedule(discard.secondPass(), this.confirmDelayMillis);
		}
		else {
			this.pending.decrementAndGet();
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

	private record Discard(String key, String redisKey, String owner, String channel, boolean fair, int pass,
			long backoffMillis) {

		Discard retry(long backoff) {
			return new Discard(this.key, this.redisKey, this.owner, this.channel, this.fair, this.pass, backoff);
		}

		Discard secondPass() {
			return new Discard(this.key, this.redisKey, this.owner, this.channel, this.fair, 2, MIN_BACKOFF_MILLIS);
		}

	}

}
