package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockListener;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.support.EngineThreads;

/**
 * The Redlock engine's {@link HoldReconciler}s: one per node, each with its own thread, so that a node that does not
 * answer delays only the discards meant for it. Redlock deletes the holds it does not keep (a failed attempt's grants,
 * a lost lease's remains, a node's count of a re-entry whose reply was lost) through them, as the single-node engine
 * does: retried with backoff until the node answers, confirmed once more a per-node timeout later, and given up (and
 * reported to {@link LockListener#discardAbandoned}) when the node refuses it for good or the hold has expired by then.
 * <p>
 * Handing a discard here never waits for a node: the caller's answer is timed by the quorum rules alone.
 */
public final class RedlockReconcilers implements AutoCloseable {

	private final List<HoldReconciler> reconcilers;

	public RedlockReconcilers(RedlockNodes nodes, List<LockListener> listeners, EngineThreads threads, String threadName) {
		long timeoutMillis = Math.max(1, nodes.timeoutNanos() / 1_000_000L);
		List<HoldReconciler> perNode = new ArrayList<>(nodes.size());
		for (int node = 0; node < nodes.size(); node++) {
			// Redlock has no fair locks: no fair entries to outlive
			perNode.add(new HoldReconciler(nodes.store(node), Math.min(timeoutMillis, 5_000), 0, listeners, threads,
					threadName + "-" + node, false));
		}
		this.reconcilers = List.copyOf(perNode);
	}

	/**
	 * Make sure {@code owner}, the owner id of a Redlock attempt on the lock {@code key} that got no lease, holds
	 * nothing on node {@code node}; tried for {@code lifeMillis}, the attempt's lease time.
	 */
	void discard(int node, String key, String redisKey, String owner, HolderLabel holder, String channel,
			long lifeMillis) {
		this.reconcilers.get(node).discard(key, redisKey, owner, holder, channel, false, lifeMillis);
	}

	/** As {@link #discard(int, String, String, String, HolderLabel, String, long)}, on every node. */
	void discardEverywhere(String key, String redisKey, String owner, HolderLabel holder, String channel,
			long lifeMillis) {
		for (int node = 0; node < this.reconcilers.size(); node++) {
			discard(node, key, redisKey, owner, holder, channel, lifeMillis);
		}
	}

	/** Make sure node {@code node} keeps nothing of {@code entry}, which this process no longer keeps. */
	void discard(int node, RedlockEntry entry) {
		this.reconcilers.get(node).discard(entry, false);
	}

	/** As {@link #discard(int, RedlockEntry)}, on every node. */
	void discardEverywhere(RedlockEntry entry) {
		this.reconcilers.forEach(reconciler -> reconciler.discard(entry, false));
	}

	/**
	 * Discard {@code entry} on node {@code node} now, on the calling thread (a node's call of a release); on failure
	 * handed to that node's reconciler as {@link #discard(int, RedlockEntry)}.
	 */
	void discardNow(int node, RedlockEntry entry) {
		this.reconcilers.get(node).discardNow(entry);
	}

	@Override
	public void close() {
		this.reconcilers.forEach(HoldReconciler::close);
	}

}
