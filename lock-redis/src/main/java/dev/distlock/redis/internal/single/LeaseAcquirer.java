package dev.distlock.redis.internal.single;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.lease.OwnerIds;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.Backoff;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import dev.distlock.redis.internal.wait.Waiter;
import org.jspecify.annotations.Nullable;

/**
 * Acquisition and waiting: one role, getting a lease. It re-enters the lease the current {@link LockOwner} holds (the
 * calling thread's own unless another owner is bound to it), or acquires
 * the lock with a fresh owner id ({@link OwnerIds}); it waits on release messages (joining other waiting threads of this process, taking
 * a lease a holder hands over), polls while no message can come, and retries through failures until the wait's
 * deadline. An acquisition that ends without a lease after a call that got no answer hands its owner id to the
 * {@link HoldReconciler} (see the fault model in docs/architecture.md).
 */
public final class LeaseAcquirer {

	/** How long the holder's remaining lease time is trusted when it has none (a key without expiry). */
	private static final long NO_EXPIRY_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final long MAX_JITTER_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	/** How often a waiter retries while no release message can reach it (its channel is not subscribed). */
	private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private final LeaseStore store;

	private final ReleaseSubscriber subscriber;

	private final LeaseWatchdog watchdog;

	private final LeaseRegistry registry;

	private final HoldReconciler reconciler;

	private final LeaseReleaser releaser;

	private final List<LockListener> listeners;

	/** A fresh, unpredictable owner id for every new acquisition. */
	private final OwnerIds ownerIds;

	/** The application the holder labels of this service's leases name. */
	private final String holderApplication;

	/** The instance the holder labels of this service's leases name. */
	private final String holderInstance;

	/** Whether a new hold stores its label in Redis ({@link LockScripts#LABEL_PREFIX}). */
	private final boolean storeHolderLabel;

	/**
	 * The label stored last and its one-line form: the same for one thread's acquisitions one after the other, which
	 * then skip the form's concatenation and escaping (issue 31). Racy but safe: an immutable pair, replaced when the
	 * label differs, and the form is a function of the label alone.
	 */
	private volatile LabelText lastLabel = new LabelText(HolderLabel.unknown(), HolderLabel.unknown().toString());

	private final AcquireCall acquireCall;

	/** One more hold of a lease already held. */
	private final LeaseReentry reentry;

	/** What an asynchronous acquisition works with. */
	private final AsyncEngine async;

	/** What a fair acquisition works with. */
	private final FairEngine fair;

	/**
	 * The kind of each mode, chosen once per request: given by the service, because the kinds sit above this engine
	 * (they call its acquirer and releaser) and a fifth kind must not need a change here.
	 */
	private final Function<LockRequest, LockKind> kinds;

	public LeaseAcquirer(LeaseStore store, ReleaseSubscriber subscriber, LeaseWatchdog watchdog, LeaseRegistry registry,
			HoldReconciler reconciler, LeaseReleaser releaser, List<LockListener> listeners, String clientId,
			int replicaAcks, long replicaAckTimeoutMillis, Executor calls, ScheduledExecutorService timers,
			long fairEntryTtlMillis, OwnerIds ownerIds, String holderApplication, String holderInstance,
			boolean storeHolderLabel, Function<LockRequest, LockKind> kinds) {
		this.kinds = kinds;
		this.acquireCall = new AcquireCall(store, clientId, subscriber, replicaAcks, replicaAckTimeoutMillis);
		this.reentry = new LeaseReentry(this, store, watchdog, registry, reconciler);
		this.async = new AsyncEngine(this, this.reentry, this.acquireCall, store, subscriber, watchdog, registry,
				reconciler, listeners, calls, timers);
		this.fair = new FairEngine(this, store.fair(), store, subscriber, watchdog, registry, reconciler,
				listeners, calls, timers, fairEntryTtlMillis);
		this.store = store;
		this.subscriber = subscriber;
		this.watchdog = watchdog;
		this.registry = registry;
		this.reconciler = reconciler;
		this.releaser = releaser;
		this.listeners = listeners;
		this.ownerIds = ownerIds;
		this.holderApplication = holderApplication;
		this.holderInstance = holderInstance;
		this.storeHolderLabel = storeHolderLabel;
	}

	public FairEngine fair() {
		return this.fair;
	}

	/** See {@link dev.distlock.core.LockService#tryAcquire(LockRequest)}; {@code redisKey} is the request's key in Redis. */
	public Optional<Lease> tryAcquire(LockRequest request, String redisKey) {
		LockOwner owner = LockOwner.current();
		long start = System.nanoTime();
		long deadline = start + request.waitTime().toNanos();
		try {
			LeaseEntry held = this.registry.heldBy(redisKey, owner, request.mode());
			if (held != null) {
				Lease reentered = this.reentry.reenter(request, held, start, deadline);
				if (reentered != null) {
					return Optional.of(reentered);
				}
			}
			return this.kinds.apply(request).acquireNew(this, request, redisKey, owner, start, deadline);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			LockInterruptedException failure = new LockInterruptedException(request.key(), ex);
			this.listeners.forEach(listener -> listener.notAcquired(request, Duration.ofNanos(System.nanoTime() - start), failure));
			throw failure;
		}
		catch (LockUnavailableException ex) {
			this.listeners.forEach(listener -> listener.notAcquired(request, Duration.ofNanos(System.nanoTime() - start), ex));
			throw ex;
		}
	}

	/**
	 * {@link dev.distlock.core.AsyncLockService#tryAcquireAsync}: the same acquisition without a thread that waits
	 * (see {@link AsyncAcquisition}).
	 */
	public CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, String redisKey, LockOwner owner) {
		return this.kinds.apply(request).acquireAsync(this.async, request, redisKey, owner);
	}

	/**
	 * Acquire the lock with the fresh owner id of {@code attempt}. When the acquisition ends without a lease after a
	 * call that went unanswered, whatever that call may yet create in Redis is discarded (the owner id is not used
	 * again).
	 */
	Optional<Lease> acquireNew(LockRequest request, Attempt attempt, long start, long deadline)
			throws InterruptedException {
		Optional<Lease> lease = Optional.empty();
		try {
			lease = firstAttempt(request, attempt, start, deadline);
			return lease;
		}
		finally {
			if (lease.isEmpty() && attempt.unanswered) {
				attempt.discardWith(this.reconciler, request.key(), false);
			}
		}
	}

	private Optional<Lease> firstAttempt(LockRequest request, Attempt attempt, long start, long deadline)
			throws InterruptedException {
		boolean mayWait = !request.waitTime().isZero();
		// Where other threads of this process wait for the key already, join them before the first attempt: it saves
		// the attempt a new waiter otherwise makes once subscribed, and makes this thread one a holder can hand the
		// lease to.
		if (mayWait && (this.subscriber.isSubscribed(attempt.channel) || this.subscriber.yieldingUntil(attempt.channel) != 0)) {
			return awaitRelease(request, attempt, -1, null, start, deadline);
		}
		long sent = System.nanoTime();
		long[] reply;
		try {
			reply = this.acquireCall.call(request, attempt, mayWait);
		}
		catch (LockUnavailableException ex) {
			if (!mayWait || ex instanceof LockAccessDeniedException) {
				throw ex;
			}
			if (System.nanoTime() - deadline >= 0) {
				throw AcquireCall.unansweredWithin(request, ex);
			}
			return awaitRelease(request, attempt, -1, ex, start, deadline);
		}
		if (reply[0] > 0) {
			return Optional.of(newLease(request, newEntry(request, attempt, reply[1], sent, 0), sent, start));
		}
		if (!mayWait) {
			return notAcquired(request, start);
		}
		return awaitRelease(request, attempt, reply[1], null, start, deadline);
	}

	/**
	 * Wait for the lock, retrying when a release message (or a release in this process) wakes this thread, when the
	 * holder's lease would run out, or not at all if a holder in this process hands the lease over. While the release
	 * channel is not subscribed, while the holder's release will not be announced (its user may not publish), and while
	 * Redis does not answer, it retries at short intervals instead, until the deadline, where it makes one last attempt
	 * unless one was under way then (no wake-up is sure to come).
	 * @param holderTtl the holder's remaining ttl in ms from the last attempt, or -1 if it is not known
	 * @param failure why the last attempt got no answer, or null
	 */
	private Optional<Lease> awaitRelease(LockRequest request, Attempt attempt, long holderTtl,
			@Nullable LockUnavailableException failure, long start, long deadline) throws InterruptedException {
		String channel = attempt.channel;
		Waiter waiter = this.subscriber.register(channel, attempt.owner, request.effectiveName(),
				attempt.ttlMillis, attempt.label);
		boolean acquired = false;
		Backoff backoff = new Backoff();
		try {
			// Only attempts made after the subscription is confirmed are sure to hear of a later release; one that is
			// slow to come is not waited for longer than a short poll, nor past the holder's lease.
			long now = System.nanoTime();
			long subscribedBy = now + ((failure != null) ? backoff.nextNanos() : pollNanos());
			if (holderTtl >= 0) {
				subscribedBy = earlier(subscribedBy, now + holderTtlNanos(holderTtl));
			}
			waiter.awaitSubscribed(earlier(subscribedBy, deadline));
			for (;;) {
				if (!waiter.startAttempt()) {
					if (waiter.handedOver()) {
						acquired = true;
						return Optional.of(handedOver(request, attempt, waiter, start));
					}
					continue;
				}
				// Every wait ends with one last attempt, at its deadline (or once woken after it): a release whose
				// message did not come (refused, lost with a connection, one message for several waiters) is found.
				long yieldUntil = (System.nanoTime() - deadline >= 0) ? 0 : this.subscriber.yieldingUntil(channel);
				if (yieldUntil != 0) {
					waiter.endAttempt();
					waiter.await(earlier(yieldUntil, deadline));
					continue;
				}
				long sent = System.nanoTime();
				long[] reply;
				try {
					reply = this.acquireCall.call(request, attempt, true);
				}
				catch (LockUnavailableException ex) {
					waiter.endAttempt();
					if (ex instanceof LockAccessDeniedException) {
						throw ex; // waiting does not help: an operator must grant it
					}
					failure = ex;
					if (System.nanoTime() - deadline >= 0) {
						break; // the attempt under way at the deadline was the last
					}
					waiter.await(earlier(System.nanoTime() + backoff.nextNanos(), deadline));
					continue;
				}
				failure = null;
				backoff.reset();
				if (reply[0] > 0) {
					acquired = true;
					return Optional.of(newLease(request, newEntry(request, attempt, reply[1], sent, 0), sent, start));
				}
				waiter.endAttempt();
				now = System.nanoTime();
				if (now - deadline >= 0) {
					break; // the last attempt: sent at the deadline, or answered after it
				}
				long wakeAt = now + holderTtlNanos(reply[1]);
				if (!this.subscriber.isSubscribed(channel) || LeaseStore.unannounced(reply)) {
					// no release message can come (not subscribed, or the holder may not publish): poll
					wakeAt = earlier(wakeAt, now + pollNanos());
				}
				waiter.await(earlier(wakeAt, deadline));
			}
			if (waiter.leave()) { // handed the lease just as the wait ended: take it
				acquired = true;
				return Optional.of(handedOver(request, attempt, waiter, start));
			}
			if (failure != null) {
				throw AcquireCall.unansweredWithin(request, failure);
			}
			return notAcquired(request, start);
		}
		catch (InterruptedException | RuntimeException ex) {
			if (!acquired && waiter.leave()) {
				// Handed the lease while failing: give it back now rather than leave it to expire.
				try {
					handedOver(request, attempt, waiter, start).release();
				}
				catch (RuntimeException releaseFailure) {
					ex.addSuppressed(releaseFailure);
				}
			}
			throw ex;
		}
		finally {
			if (waiter.handOverUnanswered()) {
				attempt.unanswered = true; // a holder's hand-over to this owner may yet run in Redis
			}
			// a reader that got in tells the others of this process that they may enter too
			this.subscriber.unregister(waiter, acquired, attempt.kind.admitsOthers());
		}
	}

	private Lease handedOver(LockRequest request, Attempt attempt, Waiter waiter, long start) {
		LeaseEntry entry = newEntry(request, attempt, waiter.grantedToken(), waiter.grantedAtNanos(),
				waiter.grantedHandOvers());
		return newLease(request, entry, waiter.grantedAtNanos(), start);
	}

	/** When to retry if no release message comes: when the holder's lease runs out, plus jitter against herds. */
	static long holderTtlNanos(long holderTtlMillis) {
		if (holderTtlMillis < 0) {
			return NO_EXPIRY_RECHECK_NANOS;
		}
		long ttl = TimeUnit.MILLISECONDS.toNanos(holderTtlMillis);
		return ttl + ThreadLocalRandom.current().nextLong(Math.min(MAX_JITTER_NANOS, ttl / 10) + 1);
	}

	/** The interval of a waiter that cannot count on a release message, with jitter. */
	static long pollNanos() {
		return POLL_NANOS + ThreadLocalRandom.current().nextLong(POLL_NANOS / 2 + 1);
	}

	/** The earlier of two {@link System#nanoTime} instants. */
	static long earlier(long a, long b) {
		return (a - b < 0) ? a : b;
	}

	/** A new lease of this process, held once by the attempt's owner. */
	LeaseEntry newEntry(LockRequest request, Attempt attempt, long token, long sent, int handOvers) {
		LeaseEntry entry = new LeaseEntry(request.key(), attempt.redisKey, attempt.channel, attempt.owner,
				request.effectiveName(), token, attempt.ttlMillis, request.autoRenew(), sent, handOvers,
				attempt.lockOwner, attempt.holder, attempt.kind);
		entry.capHold(request.maxHold());
		this.registry.add(entry);
		this.watchdog.register(entry);
		return entry;
	}

	Lease newLease(LockRequest request, LeaseEntry entry, long sent, long start) {
		RedisLease lease = new RedisLease(this.releaser, entry, request.ttl(), sent);
		Duration waited = Duration.ofNanos(sent - start);
		this.listeners.forEach(listener -> listener.acquired(request, lease, waited));
		return lease;
	}

	Optional<Lease> notAcquired(LockRequest request, long start) {
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		this.listeners.forEach(listener -> listener.notAcquired(request, waited, null));
		return Optional.empty();
	}

	/** A new acquisition of {@code redisKey} for {@code owner}, with a fresh owner id. */
	Attempt newAttempt(LockRequest request, String redisKey, LockOwner owner) {
		LockKind kind = this.kinds.apply(request);
		HolderLabel holder = HolderLabel.of(this.holderApplication, this.holderInstance, owner);
		return new Attempt(request.key(), redisKey, this.ownerIds.next(), request.ttl().toMillis(), owner, holder,
				this.storeHolderLabel ? labelText(holder) : "", kind, kind.downgradeFrom(this.registry, redisKey, owner));
	}

	/** {@return {@code holder}'s one-line form, as the lease stores it} */
	private String labelText(HolderLabel holder) {
		LabelText last = this.lastLabel;
		if (!last.holder().equals(holder)) {
			last = new LabelText(holder, holder.toString());
			this.lastLabel = last;
		}
		return last.text();
	}

	/** A holder label and its one-line form. */
	private record LabelText(HolderLabel holder, String text) {
	}

}
