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

	/** Outcome of one attempt on all nodes. */
	private enum Outcome {
		ACQUIRED, HELD, SPLIT, UNANSWERED
	}

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
		RedlockWaiting.Registration registration = null;
		Backoff backoff = new Backoff();
		try {
			for (;;) {
				boolean heard = registration != null && registration.confirmed();
				String owner = this.ownerIds.next();
				long sent = System.nanoTime();
				NodeReplies attempt = attempt(redisKey, owner, ttlMillis, willWait ? this.clientId : "", label);
				if (attempt.outcome == Outcome.ACQUIRED) {
					if (registration != null) {
						registration.acquired();
					}
					RedlockEntry entry = new RedlockEntry(request.key(), redisKey, owner, request.effectiveName(),
							attempt.tokens, ttlMillis, request.autoRenew(), this.nodes.validUntil(sent, ttlMillis),
							this.holderApplication, this.holderInstance);
					entry.capHold(request.maxHold());
					if (attempt.replies != null) {
						attempt.replies.onLate((node, reply) -> {
							if (reply[0] > 0) {
								entry.adopt(node, reply[1]);
							}
						});
					}
					this.registry.add(entry);
					this.watchdog.added(entry);
					return new RedlockLease(entry, this.releaser, request.ttl(), request.autoRenew());
				}
				// undo everywhere: a node that did not answer may have granted it, or may yet; so undo there once more
				// when its answer comes, as the first discard may have reached it before the attempt did
				HolderLabel holder = HolderLabel.of(this.holderApplication, this.holderInstance, LockOwner.current());
				this.reconcilers.discardEverywhere(request.key(), redisKey, owner, holder, channel, ttlMillis);
				if (attempt.replies != null) {
					attempt.replies.onLateAnswer((node) -> this.reconcilers.discard(node, request.key(), redisKey,
							owner, holder, channel, ttlMillis));
				}
				long now = System.nanoTime();
				if (deadline - now <= 0) {
					if (attempt.outcome == Outcome.UNANSWERED) {
						throw new LockUnavailableException(request.key(), "Could not acquire Redlock lease on '"
								+ request.key() + "' within " + request.waitTime() + ": only " + attempt.answered
								+ " of " + this.nodes.size() + " nodes answered (a quorum is " + this.nodes.quorum()
								+ ")", attempt.failure);
					}
					return null;
				}
				if (registration == null) {
					registration = this.waiting.register(channel, owner, request.effectiveName(), ttlMillis);
				}
				long pause = switch (attempt.outcome) {
					case HELD -> Math.max(TimeUnit.MILLISECONDS.toNanos(1), attempt.holderPttlNanos)
							+ ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(5));
					case SPLIT -> TimeUnit.MILLISECONDS.toNanos(5 + ThreadLocalRandom.current().nextLong(50));
					default -> backoff.nextNanos();
				};
				// not subscribed yet, or the holder's release will not be announced (its user may not publish): poll
				if (!heard || attempt.unannounced) {
					pause = Math.min(pause, TimeUnit.MILLISECONDS
							.toNanos(RedlockWaiting.POLL_MILLIS + ThreadLocalRandom.current().nextLong(5)));
				}
				registration.await(earlier(now + pause, deadline));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockInterruptedException(request.key(), ex);
		}
		finally {
			if (registration != null) {
				registration.close();
			}
		}
	}

	/** One attempt on all nodes: stops waiting once a quorum granted or refused it. */
	private NodeReplies attempt(String redisKey, String owner, long ttlMillis, String waiter, String label) {
		int quorum = this.nodes.quorum();
		int size = this.nodes.size();
		long sent = System.nanoTime();
		RedlockNodes.Replies<long[]> replies = this.nodes.onAll((node, store) -> {
			if (this.nodes.isQuarantined(node)) {
				throw new IllegalStateException("Redlock node " + node + " restarted less than the restart quarantine "
						+ "ago; it does not count toward a quorum yet");
			}
			return store.acquire(redisKey, owner, ttlMillis, waiter, 0, 0, label);
		},
				r -> r.count(v -> v[0] > 0) >= quorum || r.count(v -> v[0] == 0) > size - quorum);
		long[] tokens = new long[size];
		int granted = 0;
		int refused = 0;
		long holderPttl = Long.MAX_VALUE;
		boolean unannounced = false;
		for (int i = 0; i < size; i++) {
			long[] value = replies.value(i);
			if (value != null && value[0] > 0) {
				tokens[i] = value[1];
				granted++;
			}
			else if (value != null) {
				refused++;
				holderPttl = Math.min(holderPttl, value[1]);
				unannounced |= LeaseStore.unannounced(value);
			}
		}
		NodeReplies result = new NodeReplies();
		result.unannounced = unannounced;
		result.replies = replies;
		result.tokens = tokens;
		result.answered = granted + refused;
		result.failure = replies.anyFailure();
		result.holderPttlNanos = (holderPttl == Long.MAX_VALUE) ? 0 : TimeUnit.MILLISECONDS.toNanos(holderPttl);
		if (granted >= quorum && this.nodes.validUntil(sent, ttlMillis) - System.nanoTime() > 0) {
			result.outcome = Outcome.ACQUIRED;
		}
		else if (refused > size - quorum) {
			result.outcome = Outcome.HELD;
		}
		else if (granted + refused >= quorum) {
			result.outcome = Outcome.SPLIT; // contenders split the nodes, or the validity ran out: retry at random
		}
		else {
			result.outcome = Outcome.UNANSWERED;
		}
		return result;
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
		RedlockNodes.Replies<long[]> replies;
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

	/** What one attempt found. */
	private static final class NodeReplies {

		Outcome outcome = Outcome.UNANSWERED;

		long[] tokens = new long[0];

		RedlockNodes.@Nullable Replies<long[]> replies;

		int answered;

		long holderPttlNanos;

		/** Whether a node that refused said the holder's release will not be announced there. */
		boolean unannounced;

		@Nullable RuntimeException failure;

	}

}
