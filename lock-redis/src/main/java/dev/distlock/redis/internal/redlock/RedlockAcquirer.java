package dev.distlock.redis.internal.redlock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.Lease;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.lease.OwnerIds;
import dev.distlock.redis.internal.lease.PendingReentries;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.Backoff;
import org.jspecify.annotations.Nullable;

/**
 * Redlock acquisition and waiting, per the Redis documentation of the algorithm: a fresh owner id, the same on every
 * node; {@link LockScripts#ACQUIRE} on all nodes at once, each bounded by the per-node timeout; acquired when a quorum
 * (N/2 + 1) granted it and the validity (ttl − elapsed − drift) is still positive; otherwise the attempt is undone on
 * <em>every</em> node, those that did not answer included (they may have run it), with {@link ReadWriteScripts#DISCARD}
 * through each node's {@link HoldReconciler} ({@link RedlockReconcilers}: retried until the node answers, without the
 * caller waiting), and retried after a random delay, or after a release message from any node, within the wait.
 * <p>
 * A re-entry by the owner that holds the lease ({@link LockOwner#current()}) sends that lease's owner and each node's token, so a node re-enters
 * only the very lease it granted; it needs a quorum too.
 */
public final class RedlockAcquirer {

	/**
	 * How often a contender that keeps its grants (it holds the tie-breaker) asks its missing nodes again when no release
	 * is heard, in ms.
	 */
	private static final long KEEP_POLL_MILLIS = 5;

	private final RedlockNodes nodes;

	private final RedlockRegistry registry;

	private final RedlockWaiting waiting;

	private final RedlockReleaser releaser;

	private final RedlockWatchdog watchdog;

	/** Where an attempt that got no lease is undone, on every node (the holds it may have left there). */
	private final RedlockReconcilers reconcilers;

	private final List<LockListener> listeners;

	/** The service's client id, which an attempt that will wait presents to the nodes. */
	private final String clientId;

	/** A fresh, unpredictable owner id for every new acquisition (the same on every node), from the service. */
	private final OwnerIds ownerIds;

	/** The application the holder labels of this service's leases name. */
	private final String holderApplication;

	/** The instance the holder labels of this service's leases name. */
	private final String holderInstance;

	/** Whether a new hold stores its label on the nodes ({@link LockScripts#LABEL_PREFIX}). */
	private final boolean storeHolderLabel;

	public RedlockAcquirer(RedlockNodes nodes, RedlockRegistry registry, RedlockWaiting waiting, RedlockReleaser releaser,
			RedlockWatchdog watchdog, RedlockReconcilers reconcilers, List<LockListener> listeners, String clientId,
			OwnerIds ownerIds,
			String holderApplication, String holderInstance, boolean storeHolderLabel) {
		this.nodes = nodes;
		this.registry = registry;
		this.waiting = waiting;
		this.releaser = releaser;
		this.watchdog = watchdog;
		this.reconcilers = reconcilers;
		this.listeners = listeners;
		this.clientId = clientId;
		this.ownerIds = ownerIds;
		this.holderApplication = holderApplication;
		this.holderInstance = holderInstance;
		this.storeHolderLabel = storeHolderLabel;
	}

	public Optional<Lease> tryAcquire(LockRequest request, String redisKey) {
		long start = System.nanoTime();
		long ttlMillis = request.ttl().toMillis();
		long deadline = start + request.waitTime().toNanos();
		try {
			RedlockEntry held = this.registry.heldByCurrentOwner(redisKey);
			if (held != null) {
				Lease reentered = reenter(held, request);
				if (reentered != null) {
					this.listeners.forEach(l -> l.acquired(request, reentered, waited(start)));
					return Optional.of(reentered);
				}
			}
			Lease lease = acquire(request, redisKey, ttlMillis, start, deadline);
			if (lease != null) {
				this.listeners.forEach(l -> l.acquired(request, lease, waited(start)));
				return Optional.of(lease);
			}
			this.listeners.forEach(l -> l.notAcquired(request, waited(start), null));
			return Optional.empty();
		}
		catch (RuntimeException ex) {
			this.listeners.forEach(l -> l.notAcquired(request, waited(start), ex));
			throw ex;
		}
	}

	private @Nullable Lease acquire(LockRequest request, String redisKey, long ttlMillis, long start, long deadline) {
		boolean willWait = deadline - start > 0;
		String channel = LockScripts.channel(redisKey);
		String label = this.storeHolderLabel
				? HolderLabel.of(this.holderApplication, this.holderInstance, LockOwner.current()).toString() : "";
		String waiter = willWait ? this.clientId : "";
		int tie = this.nodes.tieBreaker(redisKey);
		RedlockWaiting.Registration registration = null;
		Backoff backoff = new Backoff();
		RedlockAttempt attempt = null;
		// whether the next new attempt asks the tie-breaker alone first: after it refused (another has it), so that this
		// contender queues on it rather than taking the nodes its holder needs; never while it may be down or slow
		boolean tieFirst = false;
		try {
			for (;;) {
				boolean heard = registration != null && registration.confirmed();
				if (attempt == null) {
					attempt = new RedlockAttempt(this.nodes, this.ownerIds.next(), ttlMillis, tie);
				}
				RedlockAttempt current = attempt;
				boolean tieOnly = tieFirst && current.granted() == 0;
				current.round(tieOnly, this.nodes.quarantines() ? null
						: (node, store) -> store.acquireAsync(redisKey, current.owner, ttlMillis, waiter, 0, label, ""),
						(node, store) -> {
					if (this.nodes.isQuarantined(node)) {
						throw new IllegalStateException("Redlock node " + node + " restarted less than the restart "
								+ "quarantine ago; it does not count toward a quorum yet");
					}
					return store.acquire(redisKey, current.owner, ttlMillis, waiter, 0, 0, label);
				});
				if (current.acquired()) {
					if (registration != null) {
						registration.acquired();
					}
					return leaseOf(request, redisKey, ttlMillis, current);
				}
				if (tieOnly && current.holdsTieBreaker()) {
					continue; // the tie-breaker is ours: ask the others at once
				}
				long now = System.nanoTime();
				boolean keep = deadline - now > 0 && current.keepable(now);
				if (!keep) {
					giveUp(request, redisKey, channel, current);
					attempt = null;
					if (tieOnly && current.tieUnsure()) {
						tieFirst = false; // a down or slow tie-breaker must not stop a quorum of the others
						if (deadline - now > 0) {
							continue;
						}
					}
					else {
						tieFirst = current.tieRefused();
					}
				}
				if (deadline - now <= 0) {
					if (current.answered < this.nodes.quorum()) {
						throw new LockUnavailableException(request.key(), "Could not acquire Redlock lease on '"
								+ request.key() + "' within " + request.waitTime() + ": only " + current.answered
								+ " of " + this.nodes.size() + " nodes answered (a quorum is " + this.nodes.quorum()
								+ ")", current.anyFailure());
					}
					return null;
				}
				if (registration == null) {
					registration = this.waiting.register(channel, current.owner, request.effectiveName(), ttlMillis);
				}
				long pause;
				if (current.refused > 0) { // held (or kept) by others: until their release is announced
					pause = Math.max(TimeUnit.MILLISECONDS.toNanos(1), current.holderPttlNanos)
							+ ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(5));
				}
				else {
					pause = backoff.nextNanos();
				}
				if (keep) { // our grants age: look again soon even if no release is heard
					pause = Math.min(pause, TimeUnit.MILLISECONDS.toNanos(KEEP_POLL_MILLIS));
				}
				// not subscribed yet, or the holder's release will not be announced (its user may not publish): poll
				if (!heard || current.unannounced) {
					pause = Math.min(pause, TimeUnit.MILLISECONDS
							.toNanos(RedlockWaiting.POLL_MILLIS + ThreadLocalRandom.current().nextLong(5)));
				}
				registration.await(earlier(now + pause, deadline));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			if (attempt != null) {
				giveUp(request, redisKey, LockScripts.channel(redisKey), attempt);
			}
			throw new LockInterruptedException(request.key(), ex);
		}
		catch (RuntimeException ex) {
			if (attempt != null) {
				giveUp(request, redisKey, LockScripts.channel(redisKey), attempt);
			}
			throw ex;
		}
		finally {
			if (registration != null) {
				registration.close();
			}
		}
	}

	/** The lease of an attempt a quorum granted; late grants are adopted, so that they are renewed and released too. */
	private Lease leaseOf(LockRequest request, String redisKey, long ttlMillis, RedlockAttempt attempt) {
		RedlockEntry entry = new RedlockEntry(request.key(), redisKey, attempt.owner, request.effectiveName(),
				attempt.tokens(), ttlMillis, request.autoRenew(), attempt.validUntilNanos(), this.holderApplication,
				this.holderInstance);
		entry.capHold(request.maxHold());
		for (NodeReplies<long[]> replies : attempt.rounds) {
			replies.onLate((node, reply) -> {
				if (reply[0] > 0) {
					entry.adopt(node, reply[1]);
				}
			});
		}
		this.registry.add(entry);
		this.watchdog.added(entry);
		return new RedlockLease(entry, this.releaser, request.ttl(), request.autoRenew());
	}

	/**
	 * Undo an attempt that got no lease on every node, those that did not answer included (they may have run it); and
	 * once more on a node when its late answer comes, as the first discard may have reached it before the attempt did.
	 * Nothing to undo when every node asked refused.
	 */
	private void giveUp(LockRequest request, String redisKey, String channel, RedlockAttempt attempt) {
		if (!attempt.mayHoldAny()) {
			return;
		}
		long ttlMillis = request.ttl().toMillis();
		HolderLabel holder = HolderLabel.of(this.holderApplication, this.holderInstance, LockOwner.current());
		this.reconcilers.discardEverywhere(request.key(), redisKey, attempt.owner, holder, channel, ttlMillis);
		for (NodeReplies<long[]> replies : attempt.rounds) {
			replies.onLateAnswer((node) -> this.reconcilers.discard(node, request.key(), redisKey, attempt.owner, holder,
					channel, ttlMillis));
		}
	}

	/**
	 * Re-enter the current owner's lease on a quorum; null when a quorum no longer has it (it is reported lost and
	 * the caller acquires anew).
	 */
	private @Nullable Lease reenter(RedlockEntry entry, LockRequest request) {
		long ttlMillis = request.ttl().toMillis();
		int quorum = this.nodes.quorum();
		long sent = System.nanoTime();
		PendingReentries.Reentry reentry = entry.reentryTarget();
		NodeReplies<long[]> replies;
		int ours;
		try {
			replies = this.nodes.onAll((node, store) -> {
				long token = entry.token(node);
				return (token == 0) ? new long[] { -1, 0 }
						: store.acquire(entry.redisKey, entry.owner, ttlMillis, "", token, reentry.target, "");
			}, r -> r.count(v -> v[0] > 0) >= quorum);
			ours = replies.count(v -> v[0] > 0);
			long validUntil = this.nodes.validUntil(sent, ttlMillis);
			if (ours >= quorum && validUntil - System.nanoTime() > 0
					&& entry.reenter(ttlMillis, request.autoRenew(), validUntil, reentry)) {
				return new RedlockLease(entry, this.releaser, request.ttl(), request.autoRenew());
			}
		}
		finally {
			entry.reentryAnswered(reentry); // nothing if counted: counted and answered in one step
		}
		int gone = replies.count(v -> v[0] < 0);
		if (gone > this.nodes.size() - quorum) {
			this.registry.lose(entry, LockLostEvent.Detection.FOUND_GONE_BY_HOLDER);
			return null;
		}
		// the nodes that re-entered count one hold more than this process: its last release discards them
		throw new LockUnavailableException(request.key(), "Could not re-enter Redlock lease on '" + request.key()
				+ "': only " + ours + " of " + this.nodes.size() + " nodes confirmed it (a quorum is " + quorum + ")",
				replies.anyFailure());
	}

	private static Duration waited(long start) {
		return Duration.ofNanos(System.nanoTime() - start);
	}

	private static long earlier(long a, long b) {
		return (a - b < 0) ? a : b;
	}

}
