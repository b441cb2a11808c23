package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.redis.internal.lease.RenewalScheduler;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.RenewalBatches;
import dev.distlock.redis.internal.support.EngineThreads;

/**
 * The Redlock engine's renewer on the shared {@link RenewalScheduler}: it renews the held Redlock leases and finds the
 * lost ones. Every lease is renewed once a part (the renewal ratio) of its lease time has passed since a quorum last
 * confirmed it: the due leases of a round go to every node at once, one {@link LockScripts#RENEW_ALL} batch per node
 * ({@link RenewalBatches#renewAll}), each node with its own tokens. A lease counts as renewed only when a quorum
 * renewed it within its validity; a round that misses the quorum is retried after a tenth of the lease time, and a
 * lease that no quorum renewed before its validity ran out is lost. A lease that so many nodes no longer have that no
 * quorum can is lost at once. A lease held for its longest hold is no longer renewed and is lost then
 * ({@code MAX_HOLD_EXCEEDED}), checked before anything else of the round (by the scheduler).
 * <p>
 * A round runs on the scheduler thread and waits for the nodes (each up to the per-node timeout): while it is on its
 * way no lease is looked at again, so none is given up by the clock before its round was judged.
 */
public final class RedlockWatchdog implements RenewalScheduler.Renewer<RedlockEntry>, AutoCloseable {

	private static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final RedlockNodes nodes;

	private final RedlockRegistry registry;

	/** Where what the nodes may keep of a lost lease is deleted. */
	private final RedlockReconcilers reconcilers;

	private final List<LockListener> listeners;

	private final double renewalRatio;

	/** When each lease is due next, after a failed round (otherwise derived from its validity). */
	private final Map<RedlockEntry, Long> retryAt = new ConcurrentHashMap<>();

	private final RenewalScheduler<RedlockEntry> scheduler;

	public RedlockWatchdog(RedlockNodes nodes, RedlockRegistry registry, RedlockReconcilers reconcilers,
			List<LockListener> listeners, double renewalRatio, EngineThreads threads, String threadName) {
		this.nodes = nodes;
		this.registry = registry;
		this.reconcilers = reconcilers;
		this.listeners = listeners;
		this.renewalRatio = renewalRatio;
		this.scheduler = new RenewalScheduler<>(this, threads, threadName);
	}

	/** A new lease: the scheduler watches it, and its next wake-up may have to come sooner. */
	void added(RedlockEntry entry) {
		this.scheduler.register(entry);
	}

	@Override
	public long maxSleepNanos() {
		return MAX_SLEEP_NANOS;
	}

	@Override
	public void passStarting(Set<RedlockEntry> entries, long now) {
		this.retryAt.keySet().removeIf(entry -> entry.state() != RedlockEntry.State.HELD);
	}

	/** Lost once its validity (what a quorum confirmed, less the drift) has run out. */
	@Override
	public boolean isLostByClock(RedlockEntry entry, long now) {
		return entry.validUntilNanos() - now <= 0;
	}

	@Override
	public void lostByClock(RedlockEntry entry) {
		this.retryAt.remove(entry);
		this.registry.lose(entry, entry.isAutoRenew() ? LockLostEvent.Detection.RENEWAL_FAILED
				: LockLostEvent.Detection.EXPIRED);
		this.reconcilers.discardEverywhere(entry);
	}

	/** Held for its longest hold: no more renewals; the nodes keep it until it lapses or the holder's release ends it. */
	@Override
	public void lost(RedlockEntry entry, LockLostEvent event) {
		this.retryAt.remove(entry);
		this.registry.announceLost(entry, event);
	}

	@Override
	public boolean claim(RedlockEntry entry, long now) {
		return entry.isAutoRenew() && dueAt(entry) - now <= 0;
	}

	@Override
	public long nextCheckNanos(RedlockEntry entry, boolean claimed, long next) {
		next = earlier(next, entry.maxHoldEndsNanos(next));
		if (!entry.isAutoRenew()) {
			return earlier(next, entry.validUntilNanos());
		}
		// a claimed lease's next look is known once its round was judged (see renew)
		return claimed ? next : earlier(next, dueAt(entry));
	}

	/** One round on all nodes, on the scheduler thread; the next look at its leases once it is judged. */
	@Override
	public long renew(List<RedlockEntry> due, long next) {
		send(due);
		for (RedlockEntry entry : due) {
			next = earlier(next, Math.min(dueAt(entry), entry.validUntilNanos()));
		}
		return next;
	}

	private long dueAt(RedlockEntry entry) {
		Long retry = this.retryAt.get(entry);
		if (retry != null) {
			return retry;
		}
		long ttlNanos = TimeUnit.MILLISECONDS.toNanos(entry.ttlMillis());
		// validUntil = last confirmation + ttl - drift: renew once the ratio of the ttl has passed since then
		return entry.validUntilNanos() - (long) (ttlNanos * (1 - this.renewalRatio));
	}

	private void send(List<RedlockEntry> due) {
		int size = this.nodes.size();
		List<List<RedlockEntry.NodeLease>> perNode = new ArrayList<>(size);
		List<int[]> indexes = new ArrayList<>(size);
		List<long[]> ttls = new ArrayList<>(size);
		for (int node = 0; node < size; node++) {
			List<RedlockEntry.NodeLease> carriers = new ArrayList<>();
			List<Integer> index = new ArrayList<>();
			for (int i = 0; i < due.size(); i++) {
				RedlockEntry.NodeLease carrier = due.get(i).onNode(node);
				if (carrier != null) {
					carriers.add(carrier);
					index.add(i);
				}
			}
			perNode.add(carriers);
			indexes.add(index.stream().mapToInt(Integer::intValue).toArray());
			long[] ttl = new long[carriers.size()];
			for (int j = 0; j < ttl.length; j++) {
				ttl[j] = due.get(index.get(j)).ttlMillis();
			}
			ttls.add(ttl);
		}
		long sent = System.nanoTime();
		NodeReplies<RenewalBatches.Renewals> replies = this.nodes.onAll((node, store) -> perNode.get(node)
				.isEmpty() ? new RenewalBatches.Renewals(0)
						: store.renewals().renewAll(perNode.get(node), ttls.get(node), this.nodes.timeoutNanos()));
		int[] ours = new int[due.size()];
		int[] gone = new int[due.size()];
		String[] errors = new String[due.size()];
		for (int node = 0; node < size; node++) {
			RenewalBatches.Renewals renewals = replies.value(node);
			int[] index = indexes.get(node);
			for (int i = 0; i < due.size(); i++) {
				if (due.get(i).onNode(node) == null) {
					gone[i]++; // this node never granted the lease (as far as we know): it cannot count toward it
				}
			}
			for (int j = 0; j < index.length; j++) {
				int i = index[j];
				if (renewals == null) {
					RuntimeException failure = replies.failure(node);
					errors[i] = "node " + node + ": " + ((failure != null) ? failure : "no answer within the timeout");
				}
				else if (renewals.failures[j] != null) {
					errors[i] = "node " + node + ": " + renewals.failures[j];
				}
				else if (renewals.ours[j]) {
					ours[i]++;
				}
				else {
					gone[i]++;
				}
			}
		}
		int quorum = this.nodes.quorum();
		long now = System.nanoTime();
		for (int i = 0; i < due.size(); i++) {
			RedlockEntry entry = due.get(i);
			long validUntil = this.nodes.validUntil(sent, entry.ttlMillis());
			if (ours[i] >= quorum && validUntil - now > 0) {
				entry.confirmed(validUntil, true);
				this.retryAt.remove(entry);
				this.listeners.forEach(l -> l.renewed(entry.name, true));
			}
			else if (gone[i] > size - quorum) {
				this.retryAt.remove(entry);
				this.listeners.forEach(l -> l.renewed(entry.name, false));
				this.registry.lose(entry, LockLostEvent.Detection.RENEWAL_FOUND_GONE);
				this.reconcilers.discardEverywhere(entry);
			}
			else {
				entry.renewalFailed("renewed on " + ours[i] + " of " + size + " nodes, a quorum is " + quorum
						+ ((errors[i] != null) ? "; " + errors[i] : ""));
				this.retryAt.put(entry, now + Math.max(TimeUnit.MILLISECONDS.toNanos(10),
						TimeUnit.MILLISECONDS.toNanos(entry.ttlMillis()) / 10));
				this.listeners.forEach(l -> l.renewed(entry.name, false));
			}
		}
	}

	private static long earlier(long a, long b) {
		return (a - b < 0) ? a : b;
	}

	@Override
	public void close() {
		this.scheduler.close();
	}

}
