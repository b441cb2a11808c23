package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.IntConsumer;
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
 * A node that did not answer by then counts as {@linkplain Replies#unanswered unanswered}: by the fault model its
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
	public <T> Replies<T> onAll(BiFunction<Integer, LeaseStore, T> call, Predicate<Replies<T>> decided) {
		return onNodes(null, this.timeout.nanos(), call, decided);
	}

	/**
	 * As {@link #onAll(BiFunction, Predicate)}, on the nodes {@code ask} marks only (all when null), each bounded by
	 * {@code timeoutNanos}. A node not asked counts as answered with neither a value nor a failure, so it is never
	 * {@linkplain Replies#unanswered unanswered} and never answers late.
	 */
	<T> Replies<T> onNodes(boolean @Nullable [] ask, long timeoutNanos, BiFunction<Integer, LeaseStore, T> call,
			Predicate<Replies<T>> decided) {
		Replies<T> replies = new Replies<>(this.stores.size());
		long start = System.nanoTime();
		long deadline = start + timeoutNanos;
		for (int i = 0; i < this.stores.size(); i++) {
			int node = i;
			if (ask != null && !ask[i]) {
				replies.answer(node, null, null);
				continue;
			}
			LeaseStore store = this.stores.get(i);
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

	/** As {@link #onAll(BiFunction, Predicate)}, waiting for every node's answer up to the per-node timeout. */
	public <T> Replies<T> onAll(BiFunction<Integer, LeaseStore, T> call) {
		return onAll(call, replies -> false);
	}

	@Override
	public void close() {
		this.pool.shutdownNow();
	}

	/** The answers of one call to all nodes: a value, a failure, or nothing (not answered in time) per node. */
	public static final class Replies<T> {

		private final List<@Nullable T> values;

		private final List<@Nullable RuntimeException> failures;

		private final boolean[] answered;

		private int answers;

		private boolean frozen;

		private @Nullable BiConsumer<Integer, T> late;

		private final Map<Integer, T> lateValues = new HashMap<>();

		private @Nullable IntConsumer lateAnswer;

		private final List<Integer> lateAnswered = new ArrayList<>();

		Replies(int size) {
			this.values = new ArrayList<>(size);
			this.failures = new ArrayList<>(size);
			for (int i = 0; i < size; i++) {
				this.values.add(null);
				this.failures.add(null);
			}
			this.answered = new boolean[size];
		}

		private void answer(int node, @Nullable T value, @Nullable RuntimeException failure) {
			BiConsumer<Integer, T> consumer = null;
			IntConsumer answered = null;
			synchronized (this) {
				if (!this.frozen) {
					this.values.set(node, value);
					this.failures.set(node, failure);
					this.answered[node] = true;
					this.answers++;
					notifyAll();
					return;
				}
				// too late for the caller, who counted the node as unanswered; kept for onLateAnswer and onLate
				if (this.lateAnswer != null) {
					answered = this.lateAnswer;
				}
				else {
					this.lateAnswered.add(node);
				}
				if (value != null && this.late != null) {
					consumer = this.late;
				}
				else if (value != null) {
					this.lateValues.put(node, value);
				}
			}
			if (answered != null) {
				answered.accept(node);
			}
			if (consumer != null && value != null) {
				consumer.accept(node, value);
			}
		}

		/**
		 * Hand each node that answers (a value or a failure) after the caller moved on, and each that did already, to
		 * {@code action}, on the thread that received the answer. The node has then run the call or never will, so what
		 * the action sends it comes after the call: a failed acquisition discards its attempt there once more, in case
		 * the call reached the node only after the first discard did (a grant left there would block the key for a
		 * whole lease time, with no release message to wake anyone).
		 */
		void onLateAnswer(IntConsumer action) {
			List<Integer> arrived;
			synchronized (this) {
				this.lateAnswer = action;
				arrived = new ArrayList<>(this.lateAnswered);
				this.lateAnswered.clear();
			}
			arrived.forEach(action::accept);
		}

		/**
		 * Hand the values that arrive after the caller moved on (and those that arrived already) to {@code consumer},
		 * on the thread that received them: an acquisition adopts a node's late grant so that it renews it too.
		 */
		void onLate(BiConsumer<Integer, T> consumer) {
			Map<Integer, T> arrived;
			synchronized (this) {
				this.late = consumer;
				arrived = new HashMap<>(this.lateValues);
				this.lateValues.clear();
			}
			arrived.forEach(consumer);
		}

		/**
		 * Wait for every answer until {@code deadline}; once {@code decided} holds, only a grace as long again as the
		 * decision took (plus 1 ms) for the rest, so that a healthy node a little slower than the quorum is still
		 * counted (and, for an acquisition, holds and renews the lease too) while a hung one costs little.
		 */
		private synchronized void await(long deadline, Predicate<Replies<T>> decided) {
			boolean interrupted = false;
			long start = System.nanoTime();
			while (this.answers < this.answered.length) {
				if (decided.test(this)) {
					long now = System.nanoTime();
					long grace = now + (now - start) + 1_000_000L;
					deadline = (grace - deadline < 0) ? grace : deadline;
					decided = replies -> false;
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					break;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this, remaining);
				}
				catch (InterruptedException ex) {
					interrupted = true; // the nodes' calls are on their way: wait them out, keep the interrupt
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}

		private synchronized Replies<T> freeze() {
			this.frozen = true;
			return this;
		}

		public int size() {
			return this.answered.length;
		}

		/** {@return the node's reply value; null when it failed or did not answer} */
		public synchronized @Nullable T value(int node) {
			return this.values.get(node);
		}

		/** {@return the node's failure, or null} */
		synchronized @Nullable RuntimeException failure(int node) {
			return this.failures.get(node);
		}

		/** {@return whether the node neither answered nor failed in time} */
		synchronized boolean unanswered(int node) {
			return !this.answered[node];
		}

		/** {@return how many nodes have a value that satisfies {@code test}} */
		synchronized int count(Predicate<T> test) {
			int count = 0;
			for (int i = 0; i < this.answered.length; i++) {
				T value = this.values.get(i);
				if (this.answered[i] && value != null && test.test(value)) {
					count++;
				}
			}
			return count;
		}

		/** {@return the first failure, for the message of an operation that failed; null if none} */
		public synchronized @Nullable RuntimeException anyFailure() {
			for (RuntimeException failure : this.failures) {
				if (failure != null) {
					return failure;
				}
			}
			return null;
		}

		/** {@return how many nodes did not answer in time} */
		synchronized int unansweredCount() {
			return this.answered.length - this.answers;
		}

	}

}
