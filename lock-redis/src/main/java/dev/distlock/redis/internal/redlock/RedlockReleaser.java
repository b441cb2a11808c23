package dev.distlock.redis.internal.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Release, extension and the ownership check of a Redlock lease, each on every node at once with the token that node
 * issued. A node whose token is unknown (it did not answer the acquisition in time) gets {@link ReadWriteScripts#DISCARD}
 * at the last release, by owner id, which is never used for another lease. Each operation counts only when a quorum
 * confirms it; when so many nodes no longer have the lease that no quorum can, the lease is lost ({@link
 * LockLostException}); when too few answer, the caller learns that the nodes did not answer
 * ({@link LockUnavailableException}), except at the last release: a lease released short of a quorum only because
 * nodes did not answer in time provably ends (it is no longer renewed; the silent nodes get a discard until they
 * answer and keep it no longer than its lease time), so that release returns normally, with a warning.
 */
public final class RedlockReleaser {

	private static final long NOT_HELD_HERE = -2;

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.RedlockLockService");

	private final RedlockNodes nodes;

	private final RedlockRegistry registry;

	private final List<LockListener> listeners;

	private final String clientId;

	/** Where the holds this process no longer keeps are deleted, node by node. */
	private final RedlockReconcilers reconcilers;

	public RedlockReleaser(RedlockNodes nodes, RedlockRegistry registry, RedlockReconcilers reconcilers,
			List<LockListener> listeners, String clientId) {
		this.nodes = nodes;
		this.registry = registry;
		this.reconcilers = reconcilers;
		this.listeners = listeners;
		this.clientId = clientId;
	}

	void release(RedlockLease lease) {
		RedlockEntry entry = lease.entry;
		Duration held = Duration.ofNanos(System.nanoTime() - lease.acquiredAtNanos);
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			if (lost.detection() == LockLostEvent.Detection.MAX_HOLD_EXCEEDED && entry.holds() <= 1) {
				// given up by its cap, not gone: the nodes keep it until it lapses, unless its holder's release ends it
				this.reconcilers.discardEverywhere(entry);
			}
			endHold(entry, true);
			this.listeners.forEach(l -> l.released(lease, held, false));
			throw new LockLostException(lost);
		}
		boolean last = entry.holds() <= 1;
		long holdsBefore = entry.holdsBeforeRelease();
		long ttlMillis = entry.ttlMillis();
		int quorum = this.nodes.quorum();
		// on Lettuce's asynchronous commands where possible; a node without the lease's token gets a discard by owner id
		// on the pool
		NodeReplies<Long> replies = this.nodes.onNodes(null, this.nodes.timeoutNanos(ttlMillis),
				(node, store) -> (entry.token(node) == 0) ? null
						: asLeft(store.releaseAsync(entry.redisKey, entry.owner, entry.token(node), entry.channel,
								this.clientId, holdsBefore, ttlMillis)),
				(node, store) -> {
			long token = entry.token(node);
			if (token == 0) {
				if (last) {
					this.reconcilers.discardNow(node, entry);
				}
				return NOT_HELD_HERE;
			}
			return store.release(entry.redisKey, entry.owner, token, entry.channel, this.clientId, holdsBefore,
					ttlMillis).holdsLeft();
		}, r -> r.count(v -> v >= 0) >= quorum);
		int ours = replies.count(v -> v >= 0);
		int notOurs = replies.count(v -> v == -1);
		if (last) {
			for (int i = 0; i < replies.size(); i++) {
				Long left = replies.value(i);
				if (left != null && left > 0) { // a re-entry whose reply was lost counted one hold more there
					this.reconcilers.discard(i, entry);
				}
			}
		}
		if (ours >= quorum) {
			endHold(entry, false);
			this.listeners.forEach(l -> l.released(lease, held, true));
			return;
		}
		if (last && notOurs == 0) {
			releasedShortOfQuorum(lease, held, replies, ours);
			return;
		}
		RuntimeException failure = failure(entry, ours, notOurs, replies.anyFailure(), "release");
		endHold(entry, true);
		this.listeners.forEach(l -> l.released(lease, held, false));
		throw failure;
	}

	/**
	 * The last release missed the quorum for lack of answers alone (no node said the lease was no longer ours): not an
	 * error of the caller's release, since the lease provably ends. It is forgotten here, so the watchdog renews it no
	 * more, and every node keeps it at most the lease time of its last renewal; each node that did not confirm gets a
	 * discard through its reconciler, retried until the node answers, so the key is usually free long before that. Said
	 * in a warning, never silently; the reconciler reports a discard it gives up ({@link LockListener#discardAbandoned}).
	 */
	private void releasedShortOfQuorum(RedlockLease lease, Duration held, NodeReplies<Long> replies,
			int ours) {
		RedlockEntry entry = lease.entry;
		List<Integer> silent = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			if (replies.value(i) == null && entry.token(i) != 0) {
				silent.add(i);
				this.reconcilers.discard(i, entry);
			}
		}
		endHold(entry, false);
		logger.warn("Released Redlock lease on '" + LogSafe.escape(entry.key) + "' with " + ours + " of "
				+ this.nodes.size() + " nodes confirming it within the node timeout (a quorum is " + this.nodes.quorum()
				+ "); nodes " + silent + " get its discard until they answer, and no longer than its lease time ("
				+ entry.ttlMillis() + " ms) keep it");
		this.listeners.forEach(l -> l.released(lease, held, true));
	}

	private static @Nullable CompletableFuture<Long> asLeft(@Nullable CompletableFuture<LeaseStore.Released> sent) {
		return (sent != null) ? sent.thenApply(LeaseStore.Released::holdsLeft) : null;
	}

	/** One hold fewer; at the last (or when {@code undo}ing a lost lease) the lease is forgotten here. */
	private void endHold(RedlockEntry entry, boolean discardEverywhere) {
		if (entry.releaseHold() == 0) {
			this.registry.forget(entry);
			if (discardEverywhere) {
				this.reconcilers.discardEverywhere(entry);
			}
		}
	}

	/**
	 * Set ({@code REPLACE}, or {@code null}: a renewal to the lease time) or add to ({@code ADD}) the lease's time on
	 * every node; counts when a quorum confirms it within the validity.
	 */
	void extend(RedlockEntry entry, long millis, @Nullable ExtendMode mode) {
		checkHeld(entry, "extend");
		boolean add = mode == ExtendMode.ADD;
		int quorum = this.nodes.quorum();
		long sent = System.nanoTime();
		NodeReplies<Long> replies = this.nodes.onAll((node, store) -> {
			long token = entry.token(node);
			return (token == 0) ? NOT_HELD_HERE : store.extend(entry.redisKey, entry.owner, token, millis, add);
		}, r -> r.count(v -> v >= 0) >= quorum);
		long quorumMillis = quorumValue(replies, quorum);
		if (quorumMillis >= 0) {
			long validUntil = this.nodes.validUntil(sent, quorumMillis);
			if (validUntil - System.nanoTime() > 0) {
				if (mode == ExtendMode.REPLACE) {
					entry.replaced(validUntil, millis);
				}
				else {
					entry.confirmed(validUntil, false);
				}
				return;
			}
		}
		throw failure(entry, replies.count(v -> v >= 0), replies.count(v -> v == -1), replies.anyFailure(), "extend");
	}

	/** Whether a quorum still has the lease as ours; a quorum that no longer can marks it lost. */
	boolean isOwned(RedlockEntry entry) {
		if (entry.state() != RedlockEntry.State.HELD) {
			return false;
		}
		int quorum = this.nodes.quorum();
		long sent = System.nanoTime();
		NodeReplies<Long> replies = this.nodes.onAll((node, store) -> {
			long token = entry.token(node);
			return (token == 0) ? NOT_HELD_HERE : store.owned(entry.redisKey, entry.owner, token);
		}, r -> r.count(v -> v >= 0) >= quorum);
		long quorumMillis = quorumValue(replies, quorum);
		if (quorumMillis >= 0) {
			entry.confirmed(this.nodes.validUntil(sent, quorumMillis), false);
			return true;
		}
		RuntimeException failure = failure(entry, replies.count(v -> v >= 0), replies.count(v -> v == -1),
				replies.anyFailure(), "check");
		if (failure instanceof LockLostException) {
			return false;
		}
		throw failure;
	}

	/** The remaining time that at least a quorum of nodes reported (the quorum-th greatest); -1 without a quorum. */
	private static long quorumValue(NodeReplies<Long> replies, int quorum) {
		List<Long> values = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			Long value = replies.value(i);
			if (value != null && value >= 0) {
				values.add(value);
			}
		}
		if (values.size() < quorum) {
			return -1;
		}
		values.sort(Comparator.reverseOrder());
		return values.get(quorum - 1);
	}

	private void checkHeld(RedlockEntry entry, String operation) {
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			throw new LockLostException(lost);
		}
		if (entry.state() != RedlockEntry.State.HELD) {
			throw new LockNotOwnedException(entry.key, entry.owner,
					"Cannot " + operation + " lock '" + entry.key + "': the lease was released");
		}
	}

	/**
	 * What a caller is told when an operation missed the quorum: the lease is lost when so many nodes no longer have
	 * it that no quorum can (marked and announced here), otherwise the nodes did not answer.
	 */
	private RuntimeException failure(RedlockEntry entry, int ours, int notOurs, @Nullable RuntimeException cause,
			String operation) {
		if (notOurs > this.nodes.size() - this.nodes.quorum()) {
			this.registry.lose(entry, LockLostEvent.Detection.FOUND_GONE_BY_HOLDER);
			LockLostEvent event = entry.lostEvent();
			if (event != null) {
				return new LockLostException(event);
			}
		}
		return new LockUnavailableException(entry.key, "Could not " + operation + " Redlock lease on '" + entry.key
				+ "': only " + ours + " of " + this.nodes.size() + " nodes confirmed it (a quorum is "
				+ this.nodes.quorum() + ")" + (operation.equals("release")
						? "; the hold counts as released, and what the other nodes hold expires within its lease time"
						: ""), cause);
	}

}
