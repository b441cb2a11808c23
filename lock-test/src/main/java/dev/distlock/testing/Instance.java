package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LogSafe;
import dev.distlock.core.RenewalStatus;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;

/**
 * One {@link InMemoryLockService}'s picture of its leases and waiters, its watchdog, and how it tells of a loss: what
 * the Redis engine's {@code LeaseRegistry}, {@code LeaseWatchdog} and {@code LeaseView} are. All its state but the
 * lock names is guarded by the store's monitor; it calls nobody back under it (listeners, actions and events go
 * through {@link Effects}).
 * <p>
 * Invariants: {@code entries} lists the HELD leases and the LOST ones whose holders have not released them yet, in
 * the order they were acquired; {@code heldByOwner} has exactly the HELD ones, by key, owner and mode (what a
 * re-entry re-enters); {@code waiting} has exactly this instance's WAITING waiters.
 */
final class Instance {

	private static final Log logger = LogFactory.getLog(InMemoryLockService.class);

	final InMemoryLockStore store;

	final String clientId;

	/** The application the holder labels of this instance's leases name. */
	private final String holderApplication;

	/** The instance the holder labels of this instance's leases name. */
	private final String holderInstance;

	final List<LockListener> listeners;

	private final @Nullable ApplicationEventPublisher eventPublisher;

	private final double renewalRatio;

	boolean closed;

	private final List<LeaseEntry> entries = new ArrayList<>();

	private final Map<OwnerKey, LeaseEntry> heldByOwner = new HashMap<>();

	private final List<Waiter> waiting = new ArrayList<>();

	private final AtomicLong ownerSequence = new AtomicLong();

	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	Instance(InMemoryLockStore store, String clientId, List<LockListener> listeners,
			@Nullable ApplicationEventPublisher eventPublisher, double renewalRatio, String holderApplication,
			String holderInstance) {
		this.store = store;
		this.clientId = clientId;
		this.holderApplication = holderApplication;
		this.holderInstance = holderInstance;
		this.listeners = List.copyOf(listeners);
		this.eventPublisher = eventPublisher;
		this.renewalRatio = renewalRatio;
	}

	// ---- leases and waiters

	@Nullable LeaseEntry heldBy(String key, LockOwner owner, LockMode mode) {
		return this.heldByOwner.get(new OwnerKey(key, owner, mode));
	}

	/** For a reader, the write hold its owner has on the key (it may read under it, a downgrade), else null. */
	@Nullable StoreHold downgradeOf(String key, LockOwner owner, LockMode mode) {
		LeaseEntry writer = (mode == LockMode.READ) ? heldBy(key, owner, LockMode.WRITE) : null;
		return (writer != null) ? writer.hold : null;
	}

	/**
	 * A fresh owner id: the client id, the acquiring thread when the owner is a thread, and a number never used before
	 * by this instance. Readable in a test's history, unlike the Redis engines' random ones: no other client can reach
	 * an in-memory store, so nobody could present a guessed id to it.
	 */
	String newOwnerId(LockOwner owner) {
		long sequence = this.ownerSequence.incrementAndGet();
		return owner.isThread() ? this.clientId + ":" + Thread.currentThread().getId() + ":" + sequence
				: this.clientId + ":" + sequence;
	}

	/** The lease of a hold the store just admitted, for {@code owner}; recorded as acquired after {@code waited}. */
	LeaseEntry newEntry(LockRequest request, LockOwner owner, String ownerThread, StoreHold hold, Instant now,
			Duration waited) {
		LeaseEntry entry = new LeaseEntry(this, hold, request.effectiveName(), owner, ownerThread,
				HolderLabel.of(this.holderApplication, this.holderInstance, owner), request.ttl(), request.autoRenew(),
				now, request.maxHold(), request.permits());
		hold.renewer = entry;
		hold.label = entry.holder.toString();
		this.entries.add(entry);
		this.heldByOwner.put(new OwnerKey(entry.key, owner, entry.mode), entry);
		this.store.history.record(now, entry.key, LockHistory.Kind.ACQUIRED, this.clientId, entry.owner, entry.mode,
				entry.token, waited, null);
		return entry;
	}

	/** The lease ended (released or expired): no longer listed nor re-entered. */
	void forget(LeaseEntry entry) {
		this.entries.remove(entry);
		this.heldByOwner.remove(new OwnerKey(entry.key, entry.lockOwner, entry.mode), entry);
	}

	void startedWaiting(Waiter waiter, Instant now) {
		this.waiting.add(waiter);
		this.store.history.record(now, waiter.key(), LockHistory.Kind.WAITING, this.clientId, waiter.ownerId,
				waiter.mode(), 0, Duration.ZERO, null);
	}

	/**
	 * The store ended {@code waiter}'s wait (granted, timed out, failed or abandoned): it no longer counts as waiting,
	 * blocked threads are woken, and an asynchronous acquisition is completed on a callback thread.
	 */
	void waitEnded(Waiter waiter, Effects effects) {
		this.waiting.remove(waiter);
		effects.wakeWaiters();
		Instant now = this.store.clock().now();
		RuntimeException failure = waiter.failure;
		if (waiter.state == Waiter.State.TIMED_OUT) {
			this.store.history.record(now, waiter.key(), LockHistory.Kind.NOT_ACQUIRED, this.clientId, null,
					waiter.mode(), 0, waiter.waited(now), null);
		}
		else if (waiter.state == Waiter.State.FAILED && failure != null) {
			this.store.history.record(now, waiter.key(), LockHistory.Kind.FAILED, this.clientId, null, waiter.mode(), 0,
					waiter.waited(now), failure.getMessage());
		}
		if (waiter.future != null && waiter.state != Waiter.State.ABANDONED) {
			effects.add(() -> CallbackThreads.CALLBACKS.execute(() -> Acquisition.completeAsync(waiter)));
		}
	}

	// ---- the watchdog

	Duration renewalInterval(Duration ttl) {
		return Duration.ofNanos(Math.max(1, (long) (ttl.toNanos() * this.renewalRatio)));
	}

	/** Renew the leases whose renewal is due at {@code now} (several missed ones count as the last of them). */
	void renewDue(Instant now, Effects effects) {
		for (LeaseEntry entry : List.copyOf(this.entries)) {
			Instant cap = entry.maxHoldUntil;
			if (cap != null && entry.isRenewable() && entry.isMaxHoldReached(now)) {
				// the renewals due before the cap happen, none at or after it; then the lease is lost at the cap
				Instant lastRenewable = cap.minusNanos(1);
				if (!lastRenewable.isBefore(entry.nextRenewal)) {
					renew(entry, lastRenewable, effects);
				}
				if (entry.isMaxHoldReached(now)) {
					announceIfNew(entry, entry.markLost(LockLostEvent.Detection.MAX_HOLD_EXCEEDED, cap), effects);
				}
			}
			else if (entry.isRenewable() && !now.isBefore(entry.nextRenewal)) {
				renew(entry, now, effects);
			}
		}
	}

	/** The store answers again: renew every renewed lease now, as the watchdog's retry soon would. */
	void renewNow(Instant now, Effects effects) {
		for (LeaseEntry entry : List.copyOf(this.entries)) {
			if (entry.isRenewable() && !entry.isMaxHoldReached(now)) {
				entry.nextRenewal = now;
				renew(entry, now, effects);
			}
		}
	}

	@Nullable Instant nextRenewal() {
		Instant next = null;
		for (LeaseEntry entry : this.entries) {
			if (entry.isRenewable()) {
				next = Instants.earlier(next, entry.nextRenewal);
				if (entry.maxHoldUntil != null) {
					next = Instants.earlier(next, entry.maxHoldUntil);
				}
			}
		}
		return next;
	}

	private void renew(LeaseEntry entry, Instant now, Effects effects) {
		Duration interval = renewalInterval(entry.ttl);
		if (!this.store.outage.isReachable()) {
			if (entry.failingSince == null) {
				entry.failingSince = entry.nextRenewal;
			}
			entry.lastRenewalError = "the store did not answer (InMemoryLockStore.makeUnreachable())";
			entry.nextRenewal = Instants.plus(now, interval);
			effects.add(() -> this.listeners.forEach((listener) -> listener.renewed(entry.name, false)));
			return;
		}
		if (entry.hold.gone) {
			announceIfNew(entry, entry.markLost(LockLostEvent.Detection.RENEWAL_FOUND_GONE, now), effects);
			return;
		}
		long missed = Duration.between(entry.nextRenewal, now).toNanos() / interval.toNanos();
		Instant renewedAt = entry.nextRenewal.plus(interval.multipliedBy(missed));
		Instant until = Instants.plus(renewedAt, entry.ttl);
		if (until.isAfter(entry.hold.deadline)) {
			entry.hold.deadline = until;
		}
		if (until.isAfter(entry.validUntil)) {
			entry.validUntil = until;
		}
		entry.lastRenewal = renewedAt;
		entry.nextRenewal = Instants.plus(renewedAt, interval);
		entry.failingSince = null;
		entry.lastRenewalError = null;
		effects.add(() -> this.listeners.forEach((listener) -> listener.renewed(entry.name, true)));
	}

	// ---- losses

	/**
	 * The store dropped the lease's hold at its deadline: a fixed lease (or one of a closed instance, which nothing
	 * renews any more) ends as expired, its holder finding out at its next call; a renewed lease is lost, its renewals
	 * having failed for its whole lease time.
	 */
	void holdExpired(LeaseEntry entry, Instant at, Effects effects) {
		if (entry.state != LeaseEntry.State.HELD) {
			return;
		}
		if (entry.autoRenew && !this.closed) {
			announceIfNew(entry, entry.markLost(LockLostEvent.Detection.RENEWAL_FAILED, at), effects);
		}
		else {
			entry.state = LeaseEntry.State.EXPIRED;
			forget(entry);
		}
	}

	/** The test made the lease lost now ({@link InMemoryLockStore#lose(String)}): told as a renewal would tell it. */
	void lostNow(LeaseEntry entry, Instant now, Effects effects) {
		announceIfNew(entry, entry.markLost(LockLostEvent.Detection.RENEWAL_FOUND_GONE, now), effects);
	}

	/** The holder found its lease gone from the store: the loss (announced once), and its event. */
	LockLostEvent lostOnHolderCheck(LeaseEntry entry, Instant now, Effects effects) {
		LockLostEvent event = entry.markLostByHolder(now);
		if (event != null) {
			announce(entry, event, effects);
			return event;
		}
		LockLostEvent earlier = entry.lostEvent;
		if (earlier == null) {
			throw new IllegalStateException("A lost lease has an event: " + entry);
		}
		return earlier;
	}

	private void announceIfNew(LeaseEntry entry, @Nullable LockLostEvent event, Effects effects) {
		if (event != null) {
			announce(entry, event, effects);
		}
	}

	/**
	 * A lease was found lost: no longer re-entered (it stays listed, as lost, until its holder releases it), and the
	 * log, the listeners, the holders' lost-lease actions and the application hear of it once; the actions and the
	 * event on the store's event thread, as the Redis engine runs them on its own.
	 */
	private void announce(LeaseEntry entry, LockLostEvent event, Effects effects) {
		this.heldByOwner.remove(new OwnerKey(entry.key, entry.lockOwner, entry.mode), entry);
		this.store.history.record(event.detectedAt(), entry.key, LockHistory.Kind.LOST, this.clientId, entry.owner,
				entry.mode, entry.token, Duration.between(entry.acquiredAt, event.detectedAt()), event.detection().name());
		List<Consumer<LockLostEvent>> actions = entry.takeLostActions();
		ApplicationEventPublisher publisher = this.eventPublisher;
		effects.add(() -> {
			logger.warn("Lock '" + LogSafe.escape(event.key()) + "' (fencing token " + event.fencingToken()
					+ ") held by " + event.holder() + " was lost: " + event.detection().description());
			// each listener guarded: one that throws neither keeps the others from hearing nor the actions and event
			this.listeners.forEach((listener) -> CallbackThreads.runLogged(() -> listener.lost(event),
					"a listener told of the loss of lock '" + LogSafe.escape(event.key()) + "'"));
			if (!actions.isEmpty()) {
				this.store.events.execute(() -> actions.forEach((action) -> CallbackThreads.runLogged(
						() -> action.accept(event), "a lost-lease action of lock '" + event.key() + "'")));
			}
			if (publisher != null) {
				this.store.events.execute(() -> publisher.publishEvent(event));
			}
		});
	}

	// ---- the operator's view

	List<LeaseSnapshot> snapshots(Instant now) {
		return this.entries.stream()
			.sorted(Comparator.comparing((LeaseEntry entry) -> entry.acquiredAt).thenComparing((entry) -> entry.key))
			.map((entry) -> entry.snapshot(now))
			.toList();
	}

	int count(boolean lost) {
		int count = 0;
		for (LeaseEntry entry : this.entries) {
			if ((entry.state == LeaseEntry.State.LOST) == lost) {
				count++;
			}
		}
		return count;
	}

	int waitingCount() {
		return this.waiting.size();
	}

	LockActivity activity() {
		Map<String, Integer> held = new HashMap<>();
		for (LeaseEntry entry : this.entries) {
			if (entry.state != LeaseEntry.State.LOST) {
				held.merge(entry.name, 1, Integer::sum);
			}
		}
		Map<String, Integer> waiters = new HashMap<>();
		for (Waiter waiter : this.waiting) {
			waiters.merge(waiter.request.effectiveName(), 1, Integer::sum);
		}
		return new LockActivity(held, waiters);
	}

	RenewalStatus renewalStatus() {
		int failing = 0;
		Instant since = null;
		String lastError = null;
		for (LeaseEntry entry : this.entries) {
			if (entry.state == LeaseEntry.State.HELD && entry.failingSince != null) {
				failing++;
				if (since == null || entry.failingSince.isBefore(since)) { // the error of the longest failing lease
					since = entry.failingSince;
					lastError = entry.lastRenewalError;
				}
			}
		}
		return (failing == 0) ? RenewalStatus.HEALTHY : new RenewalStatus(failing, since, lastError);
	}

	/** One set lookup per acquisition: the names for per-name gauges, before their first lease or waiter shows. */
	void noteName(String name) {
		if (!this.names.contains(name) && this.names.add(name)) {
			this.nameActions.forEach((action) -> CallbackThreads.runLogged(() -> action.accept(name),
					"a lock name action"));
		}
	}

	void onLockName(Consumer<String> action) {
		this.nameActions.add(action);
		this.names.forEach(action);
	}

	private record OwnerKey(String key, LockOwner owner, LockMode mode) {
	}

}
