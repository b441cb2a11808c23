package dev.distlock.redis.internal.redlock;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Predicate;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.EngineThreads;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The Redlock engine's door to its N independent masters: one {@link LeaseStore} per node (so every node runs the very
 * scripts of {@link LockScripts}), and one call to all of them at once, each bounded by the per-node timeout.
 * <p>
 * A call to the N nodes runs in parallel on a small pool; the caller waits until every node answered, until the
 * answers so far decide the outcome (a quorum of grants, say), or until the per-node timeout, whichever comes first.
 * A node that did not answer by then counts as {@linkplain NodeReplies#unanswered unanswered}: by the fault model its
 * command may have run or may still run, so the callers treat it as such (a failed acquisition discards on every
 * node, answered or not). A paused node therefore costs an operation at most the per-node timeout.
 */
public final class RedlockNodes implements AutoCloseable {

	private final List<LeaseStore> stores;

	private final List<RedisConnectionFactory> factories;

	private final long restartQuarantineSeconds;

	private final NodeTimeout timeout;

	private final double driftFactor;

	private final ExecutorService pool;

	/**
	 * Nodes with a per-node timeout of exactly {@code timeoutNanos} when it is positive, or (0) one derived from the
	 * nodes' reply times between 50 and 500 ms ({@link NodeTimeout}).
	 */
	public RedlockNodes(List<RedisConnectionFactory> factories, long timeoutNanos, double driftFactor,
			long restartQuarantineMillis, EngineThreads threads, String threadName) {
		this(factories, (timeoutNanos > 0) ? NodeTimeout.fixed(timeoutNanos)
				: NodeTimeout.adaptive(NodeTimeout.FLOOR_NANOS, NodeTimeout.CEILING_NANOS), driftFactor,
				restartQuarantineMillis, threads, threadName);
	}

	RedlockNodes(List<RedisConnectionFactory> factories, NodeTimeout timeout, double driftFactor,
			long restartQuarantineMillis, EngineThreads threads, String threadName) {
		this.stores = factories.stream().map(LeaseStore::new).toList();
		this.factories = List.copyOf(factories);
		// uptime comes in whole seconds, rounded down: a node counts once it has been up for the quarantine at least
		this.restartQuarantineSeconds = (restartQuarantineMillis + 999) / 1000;
		this.timeout = timeout;
		this.driftFactor = driftFactor;
		// a thread per call in flight: a node that hangs keeps only its own call's thread until its client times out
		this.pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				threads.named(threadName));
	}

	/** {@return how many nodes there are} */
	public int size() {
		return this.stores.size();
	}

	/** {@return the store of node {@code node}, for a role that works on each node alone} */
	public LeaseStore store(int node) {
		return this.stores.get(node);
	}

	/**
	 * Whether node {@code node} started less than the restart quarantine ago (its {@code uptime_in_seconds}), so that a
	 * new acquisition must not count it: a node restarted without its data would otherwise grant leases that other
	 * clients hold on it (the delayed-restart rule, enforced by the client). Always false without a quarantine; one
	 * round trip otherwise.
	 */
	boolean isQuarantined(int node) {
		if (this.restartQuarantineSeconds == 0) {
			return false;
		}
		try (RedisConnection connection = this.factories.get(node).getConnection()) {
			Properties info = connection.serverCommands().info("server");
			String uptime = (info != null) ? info.getProperty("uptime_in_seconds") : null;
			if (uptime == null) {
				throw new IllegalStateException("Redis did not report its uptime_in_seconds");
			}
			return Long.parseLong(uptime.trim()) < this.restartQuarantineSeconds;
		}
	}

	/**
	 * {@return the tie-breaker node of {@code redisKey}}: a fixed function of the key, so every client picks the same
	 * node, and different keys spread over the nodes ({@link RedlockAttempt}).
	 */
	public int tieBreaker(String redisKey) {
		return Math.floorMod(redisKey.hashCode() * 0x9E3779B9, this.stores.size());
	}

	/** {@return whether new acquisitions check each node's uptime first (a blocking call)} */
	boolean quarantines() {
		return this.restartQuarantineSeconds != 0;
	}

	/** {@return the quorum: N/2 + 1} */
	public int quorum() {
		return this.stores.size() / 2 + 1;
	}

	/** {@return the per-node timeout in nanoseconds now (adaptive: as the nodes' recent replies make it)} */
	public long timeoutNanos() {
		return this.timeout.nanos();
	}

	/**
	 * {@return the least per-node timeout: the fixed one, or the adaptive floor; lease times must be at least three of
	 * it}
	 */
	public long minTimeoutNanos() {
		return this.timeout.floorNanos();
	}

	/** {@return the per-node timeout of a call about a lease of {@code ttlMillis} ({@link NodeTimeout#forTtl})} */
	long timeoutNanos(long ttlMillis) {
		return this.timeout.forTtl(ttlMillis);
	}

	/**
	 * {@return until when a lease of {@code ttlMillis} that a quorum confirmed for a call sent at {@code sentNanos} is
	 * valid: the send time plus the lease time minus the drift allowance (ttl × drift factor + 2 ms) for clocks that
	 * run at slightly different rates}
	 */
	long validUntil(long sentNanos, long ttlMillis) {
		long driftNanos = (long) (ttlMillis * this.driftFactor * 1_000_000L) + 2_000_000L;
		return sentNanos + ttlMillis * 1_000_000L - driftNanos;
	}

	/**
	 * Run {@code call} on every node at once; return when all answered, shortly after {@code decided} holds for the
	 * answers so far, or at the per-node timeout. The replies are by node index; an unanswered node's reply says so.
	 */
	public <T> NodeReplies<T> onAll(BiFunction<Integer, LeaseStore, T> call, Predicate<NodeReplies<T>> decided) {
		return onNodes(null, this.timeout.nanos(), call, decided);
	}

	/**
	 * As {@link #onAll(BiFunction, Predicate)}, on the nodes {@code ask} marks only (all when null), each bounded by
	 * {@code timeoutNanos}. A node not asked counts as answered with neither a value nor a failure, so it is never
	 * {@linkplain NodeReplies#unanswered unanswered} and never answers late.
	 */
	<T> NodeReplies<T> onNodes(boolean @Nullable [] ask, long timeoutNanos, BiFunction<Integer, LeaseStore, T> call,
			Predicate<NodeReplies<T>> decided) {
		return onNodes(ask, timeoutNanos, null, call, decided);
	}

	/**
	 * As {@link #onNodes(boolean[], long, BiFunction, Predicate)}, starting each node's call with {@code async} first:
	 * a call that Lettuce's asynchronous commands carry holds no thread of the pool while its node answers (under
	 * contention the hand-offs to the pool's threads cost more CPU than the calls); where {@code async} gives null (no
	 * such path) the call runs on the pool as usual. Either way the reply, a late one too, is counted the same.
	 */
	<T> NodeReplies<T> onNodes(boolean @Nullable [] ask, long timeoutNanos, @Nullable AsyncCall<T> async,
			BiFunction<Integer, LeaseStore, T> call, Predicate<NodeReplies<T>> decided) {
		NodeReplies<T> replies = new NodeReplies<>(this.stores.size());
		long start = System.nanoTime();
		long deadline = start + timeoutNanos;
		for (int i = 0; i < this.stores.size(); i++) {
			int node = i;
			if (ask != null && !ask[i]) {
				replies.answer(node, null, null);
				continue;
			}
			LeaseStore store = this.stores.get(i);
			if (async != null) {
				CompletableFuture<T> started;
				try {
					started = async.start(node, store);
				}
				catch (RuntimeException ex) {
					replies.answer(node, null, ex);
					continue;
				}
				if (started != null) {
					started.whenComplete((value, failure) -> {
						if (failure == null) {
							this.timeout.record(System.nanoTime() - start);
						}
						replies.answer(node, (failure == null) ? value : null,
								(failure == null) ? null : runtime(failure));
					});
					continue;
				}
			}
			try {
				this.pool.execute(() -> {
					T value;
					try {
						value = call.apply(node, store);
					}
					catch (RuntimeException ex) {
						replies.answer(node, null, ex);
						return;
					}
					// every reply, a late one too, tells how long the nodes take to answer
					this.timeout.record(System.nanoTime() - start);
					replies.answer(node, value, null);
				});
			}
			catch (RejectedExecutionException ex) {
				replies.answer(node, null, ex);
			}
		}
		replies.await(deadline, decided);
		return replies.freeze();
	}

	private static RuntimeException runtime(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause);
	}

	/** A node's call on Lettuce's asynchronous commands; null when that path is not available. */
	interface AsyncCall<T> {

		@Nullable CompletableFuture<T> start(int node, LeaseStore store);

	}

	/** As {@link #onAll(BiFunction, Predicate)}, waiting for every node's answer up to the per-node timeout. */
	public <T> NodeReplies<T> onAll(BiFunction<Integer, LeaseStore, T> call) {
		return onAll(call, replies -> false);
	}

	@Override
	public void close() {
		this.pool.shutdownNow();
	}

}
