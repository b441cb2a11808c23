package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The answers of one call to all Redlock nodes ({@link RedlockNodes#onAll}): a value, a failure, or nothing (not
 * answered in time) per node. Guarded by its own monitor: the nodes' answers arrive on other threads.
 */
public final class NodeReplies<T> {

	private final List<@Nullable T> values;

	private final List<@Nullable RuntimeException> failures;

	private final boolean[] answered;

	private int answers;

	private boolean frozen;

	private @Nullable BiConsumer<Integer, T> late;

	private final Map<Integer, T> lateValues = new HashMap<>();

	private @Nullable IntConsumer lateAnswer;

	private final List<Integer> lateAnswered = new ArrayList<>();

	NodeReplies(int size) {
		this.values = new ArrayList<>(size);
		this.failures = new ArrayList<>(size);
		for (int i = 0; i < size; i++) {
			this.values.add(null);
			this.failures.add(null);
		}
		this.answered = new boolean[size];
	}

	void answer(int node, @Nullable T value, @Nullable RuntimeException failure) {
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
	synchronized void await(long deadline, Predicate<NodeReplies<T>> decided) {
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

	synchronized NodeReplies<T> freeze() {
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
