package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.lease.RenewalScheduler;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.store.RenewalBatches;
import dev.distlock.redis.internal.support.EngineThreads;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The single-node engine's renewer on the shared {@link RenewalScheduler}, which keeps a service's leases alive: it
 * renews every auto-renewed lease once {@code ttl × ratio} has passed since its last renewal, all leases due in one
 * tick in one batch, and notices leases that could not be renewed before their lease time ran out, and gives up the
 * leases held for their longest hold ({@link LeaseEntry#isMaxHoldReached}): no more renewals, lost as
 * {@code MAX_HOLD_EXCEEDED}.
 * <p>
 * The scheduler thread only looks at clocks and entries; Redis is called on a separate renewal thread, so a slow or
 * unreachable server can delay renewals but never the detection of a lease whose lease time has passed. See
 * {@link LeaseEntry} for why a renewal cannot race with a release.
 */
public final class LeaseWatchdog implements RenewalScheduler.Renewer<LeaseEntry>, AutoCloseable {

	/** Callbacks to the service; called on the watchdog's threads. */
	public interface Callbacks {

		void renewed(LeaseEntry entry, boolean success);

		void lost(LeaseEntry entry, LockLostEvent event);

		void ended(LeaseEntry entry);

	}

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.LeaseWatchdog");

	private static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(5);

	/** Threads of {@link #io}: batches blocked on silent shards at once before the others queue behind them. */
	private static final int IO_THREADS = 8;

	private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final RenewalBatches batches;

	private final double renewalRatio;

	private final Callbacks callbacks;

	private final RenewalScheduler<LeaseEntry> scheduler;

	private final ExecutorService renewals;

	/**
	 * Where renewal replies are applied, and where the blocking template path calls Redis: up to a few threads, so
	 * that a batch waiting on a silent shard holds back no other batch (their leases are disjoint: a lease is in one
	 * batch at a time, as {@link LeaseEntry#claimRenewal} claims it until its result is applied).
	 */
	private final ThreadPoolExecutor io;

	/** The client's command timeout in ms where known, else 0 (see {@link #renewalTimeoutNanos}). */
	private final long commandTimeoutMillis;

	/** Whether a lease is due (not merely soon) in the pass running; read and written on the scheduler thread. */
	private boolean anyDue;

	private volatile long lastFailureLogNanos;

	public LeaseWatchdog(RenewalBatches batches, double renewalRatio, long commandTimeoutMillis, Callbacks callbacks,
			EngineThreads threads, String threadName) {
		this.batches = batches;
		this.commandTimeoutMillis = commandTimeoutMillis;
		this.renewalRatio = renewalRatio;
		this.callbacks = callbacks;
		this.renewals = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				threads.named(threadName + "-renewal"));
		// a thread more only while all are busy (a hand-off queue), so a single server's service keeps one; when all
		// are busy (eight batches on silent shards), the task queues on the renewal thread, never on the client's
		// event loop, which completes the replies
		this.io = new ThreadPoolExecutor(1, IO_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				threads.named(threadName + "-renewal-io"), (task, pool) -> {
					if (!pool.isShutdown()) {
						this.renewals.execute(task);
					}
				});
		this.io.allowCoreThreadTimeOut(true);
		this.scheduler = new RenewalScheduler<>(this, threads, threadName);
	}

	/** Start watching a newly acquired entry: renew it if it is auto-renewed, end it when its time runs out. */
	void register(LeaseEntry entry) {
		this.scheduler.register(entry);
	}

	/** Stop watching an entry whose lease was released. */
	void unregister(LeaseEntry entry) {
		this.scheduler.unregister(entry);
	}

	/** Re-examine the entries now, e.g. after a re-entry turned a fixed lease into a renewed one. */
	void wakeUp() {
		this.scheduler.wakeUp();
	}

	int size() {
		return this.scheduler.size();
	}

	long intervalNanos(LeaseEntry entry) {
		return intervalNanos(entry.ttlMillis());
	}

	/** The time between renewals of a lease of {@code ttlMillis}. */
	long intervalNanos(long ttlMillis) {
		return Math.max(1, (long) (ttlMillis * 1_000_000L * this.renewalRatio));
	}

	@Override
	public long maxSleepNanos() {
		return MAX_SLEEP_NANOS;
	}

	/**
	 * Leases due within a quarter of their interval are renewed early, together with one that is due, but only when one
	 * is due: a pass that runs because a batch just finished (or a lease was registered) renews nothing early. Without
	 * that rule every finished batch would claim the next sliver of leases, and leases acquired over a few seconds would
	 * be renewed in dozens of small batches, each after a pass over all entries, instead of a few large ones.
	 */
	@Override
	public void passStarting(Set<LeaseEntry> entries, long now) {
		this.anyDue = false;
		for (LeaseEntry entry : entries) {
			if (entry.isRenewalDue(now, intervalNanos(entry))) {
				this.anyDue = true;
				break;
			}
		}
	}

	/** Lost by the clock only when no renewal that could still keep it is on its way ({@link LeaseEntry}). */
	@Override
	public boolean isLostByClock(LeaseEntry entry, long now) {
		return entry.isLostByClock(now);
	}

	@Override
	public void lostByClock(LeaseEntry entry) {
		if (entry.isAutoRenew()) {
			LockLostEvent event = entry.markLost(LockLostEvent.Detection.RENEWAL_FAILED);
			if (event != null) {
				this.callbacks.lost(entry, event);
			}
		}
		else if (entry.markExpired()) {
			this.callbacks.ended(entry);
		}
	}

	@Override
	public void lost(LeaseEntry entry, LockLostEvent event) {
		this.callbacks.lost(entry, event);
	}

	@Override
	public boolean claim(LeaseEntry entry, long now) {
		long interval = intervalNanos(entry);
		return entry.claimRenewal(now, interval, this.anyDue ? interval / 4 : 0);
	}

	@Override
	public long nextCheckNanos(LeaseEntry entry, boolean claimed, long next) {
		long check = entry.nextCheckNanos(intervalNanos(entry));
		return (check - next < 0) ? check : next;
	}

	/** Hands the round to the renewal thread: the scheduler thread never waits for Redis. */
	@Override
	public long renew(List<LeaseEntry> due, long next) {
		this.renewals.execute(() -> send(due));
		return next;
	}

	/**
	 * Send the renewals of {@code due}; each batch's result is applied as it comes ({@link #applied}), on the I/O
	 * threads, so a batch whose shard is silent holds back no other.
	 */
	private void send(List<LeaseEntry> due) {
		long sent = System.nanoTime();
		long[] ttls = new long[due.size()];
		long timeout = Long.MAX_VALUE;
		for (int i = 0; i < due.size(); i++) {
			LeaseEntry entry = due.get(i);
			ttls[i] = entry.ttlMillis();
			long entryTimeout = renewalTimeoutNanos(ttls[i]);
			entry.renewalSent(sent, sent + entryTimeout);
			timeout = Math.min(timeout, entryTimeout);
		}
		this.batches.renewEach(due, ttls, timeout, this.io, (batch, result) -> applied(due, batch, result, sent));
	}

	/**
	 * The shortest lease time that a renewed lease can keep through one renewal that times out: the lease must outlast
	 * the renewal period ({@code ttl × renewal ratio}), the client's command timeout (how long an unanswered renewal is
	 * waited for) and the retry delay after it (a quarter of the period): {@code ttl > ttl × ratio × 1.25 + command
	 * timeout}. A shorter lease is still renewed, and survives the failure of another shard, but one slow answer from its
	 * own server loses it. {@link Duration#ZERO} when the command timeout is not known (clients other than Lettuce).
	 */
	public Duration shortestRenewableTtl() {
		if (this.commandTimeoutMillis <= 0) {
			return Duration.ZERO;
		}
		double share = 1 - this.renewalRatio * 1.25;
		// a ratio above 0.8 leaves no room for a retry at all: then every lease time is too short to survive a timeout
		return (share <= 0) ? LockSettings.MAX_TTL : Duration.ofMillis(
				Math.min(LockSettings.MAX_TTL.toMillis(), (long) Math.ceil(this.commandTimeoutMillis / share)));
	}

	/**
	 * How long a renewal of a lease of {@code ttlMillis} may go unanswered before it counts as failed: the client's
	 * command timeout where known, at most the lease time (a later "yes" could not make the lease valid again).
	 */
	long renewalTimeoutNanos(long ttlMillis) {
		long millis = (this.commandTimeoutMillis > 0) ? Math.min(this.commandTimeoutMillis, ttlMillis) : ttlMillis;
		return TimeUnit.MILLISECONDS.toNanos(Math.max(1, millis));
	}

	/** Apply the result of one batch of a round sent at {@code sent}; called on an I/O thread. */
	private void applied(List<LeaseEntry> due, int[] batch, RenewalBatches.Renewals result, long sent) {
		long now = System.nanoTime();
		int failed = 0;
		@Nullable Exception failure = null;
		String described = "";
		for (int i : batch) {
			LeaseEntry entry = due.get(i);
			Exception error = result.failures[i];
			if (error != null) {
				if (error != failure) { // a batch's leases share its failure: described once
					described = RedisFailures.describe(error, entry.redisKey);
				}
				// only the leases of the batch that failed: the others were answered for
				entry.renewalFailed(now, Math.max(MIN_RETRY_NANOS, intervalNanos(entry) / 4), described);
				this.callbacks.renewed(entry, false);
				failed++;
				failure = error;
				continue;
			}
			LockLostEvent event = entry.renewalDone(result.ours[i], sent, intervalNanos(entry));
			if (event != null) {
				this.scheduler.unregister(entry);
				this.callbacks.lost(entry, event);
			}
			else if (result.ours[i]) {
				this.callbacks.renewed(entry, true);
			}
		}
		if (failure != null) {
			logFailure(failed, batch.length, described);
		}
		wakeUp();
	}

	private void logFailure(int failed, int sent, String failure) {
		long now = System.nanoTime();
		if (now - this.lastFailureLogNanos > TimeUnit.SECONDS.toNanos(10)) {
			this.lastFailureLogNanos = now;
			logger.warn("Could not renew " + failed + " of " + sent
					+ " lock lease(s); retrying until their lease time runs out: " + LogSafe.escape(failure));
		}
	}

	@Override
	public void close() {
		this.scheduler.stop();
		this.renewals.shutdownNow();
		this.io.shutdownNow();
		try {
			this.scheduler.join(TimeUnit.SECONDS.toMillis(5));
			this.renewals.awaitTermination(5, TimeUnit.SECONDS);
			this.io.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
