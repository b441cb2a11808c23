package dev.distlock.redis;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LogSafe;
import dev.distlock.core.RenewalStatus;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;

/**
 * The Redlock leases this process holds (what a re-entry re-enters, what the watchdog renews, what operators see) and
 * the announcement of their losses: a log line, the listeners, and a {@link LockLostEvent} published on the events
 * thread so that a slow application listener cannot delay renewals.
 */
final class RedlockRegistry implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedlockRegistry.class);

	/**
	 * Held leases by owner and key: the lease an owner ({@link LockOwner}, the thread's own by default) re-enters.
	 * Owners compare by identity; an entry leaves this map when its lease ends or is lost.
	 */
	private final ConcurrentHashMap<OwnerKey, RedlockEntry> byOwner = new ConcurrentHashMap<>();

	/** Every lease not yet released by its holder, lost ones included. */
	private final Set<RedlockEntry> entries = ConcurrentHashMap.newKeySet();

	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	private final List<LockListener> listeners;

	private final @Nullable ApplicationEventPublisher eventPublisher;

	/** Where events are published and holders' lost-lease actions run: an engine thread, lazily started. */
	private final ExecutorService events;

	RedlockRegistry(List<LockListener> listeners, @Nullable ApplicationEventPublisher eventPublisher,
			ExecutorService events) {
		this.listeners = listeners;
		this.eventPublisher = eventPublisher;
		this.events = events;
	}

	/** {@return the lease the current {@link LockOwner} holds on {@code key}, or null} */
	@Nullable RedlockEntry heldByCurrentOwner(String key) {
		RedlockEntry entry = this.byOwner.get(new OwnerKey(LockOwner.current(), key));
		return (entry != null && entry.state() == RedlockEntry.State.HELD) ? entry : null;
	}

	void add(RedlockEntry entry) {
		this.entries.add(entry);
		this.byOwner.put(new OwnerKey(entry.lockOwner, entry.key), entry);
	}

	/** The holder released the lease's last hold (or its release found it lost): it is no longer listed. */
	void forget(RedlockEntry entry) {
		this.entries.remove(entry);
		this.byOwner.remove(new OwnerKey(entry.lockOwner, entry.key), entry);
	}

	/** The leases to renew: held and auto-renewed. */
	List<RedlockEntry> renewable() {
		return this.entries.stream().filter(e -> e.state() == RedlockEntry.State.HELD && e.autoRenew()).toList();
	}

	/** The held leases, for the watchdog's expiry check. */
	List<RedlockEntry> held() {
		return this.entries.stream().filter(e -> e.state() == RedlockEntry.State.HELD).toList();
	}

	/** Mark {@code entry} lost and announce it, once. */
	void lose(RedlockEntry entry, LockLostEvent.Detection detection) {
		LockLostEvent event = entry.lose(detection);
		if (event == null) {
			return;
		}
		this.byOwner.remove(new OwnerKey(entry.lockOwner, entry.key), entry);
		logger.warn("Lost Redlock lease on '" + LogSafe.escape(entry.key) + "' (fencing token " + entry.fencingToken
				+ ") held by " + entry.holder + ": " + detection.description());
		for (LockListener listener : this.listeners) {
			try {
				listener.lost(event);
			}
			catch (RuntimeException ex) {
				logger.warn("Lock listener failed on a lost lease", ex);
			}
		}
		LostActions.run(entry.lostActions.fire(event), event, this.events);
		ApplicationEventPublisher publisher = this.eventPublisher;
		if (publisher != null) {
			try {
				this.events.execute(() -> publisher.publishEvent(event));
			}
			catch (RejectedExecutionException ex) {
				logger.debug("Lock service closed; LockLostEvent not published", ex);
			}
		}
	}

	/** Note a lock name; tells the name subscribers the first time. */
	void noteName(String name) {
		if (this.names.add(name)) {
			this.nameActions.forEach(action -> action.accept(name));
		}
	}

	void onLockName(Consumer<String> action) {
		this.nameActions.add(action);
		this.names.forEach(action);
	}

	List<LeaseSnapshot> snapshots() {
		return this.entries.stream().map(RedlockEntry::snapshot)
				.sorted((a, b) -> a.heldSince().compareTo(b.heldSince())).toList();
	}

	int heldCount() {
		return (int) this.entries.stream().filter(e -> e.state() == RedlockEntry.State.HELD).count();
	}

	int lostCount() {
		return (int) this.entries.stream().filter(e -> e.state() == RedlockEntry.State.LOST).count();
	}

	Map<String, Integer> heldByName() {
		Map<String, Integer> counts = new HashMap<>();
		for (RedlockEntry entry : this.entries) {
			if (entry.state() == RedlockEntry.State.HELD) {
				counts.merge(entry.name, 1, Integer::sum);
			}
		}
		return counts;
	}

	LockActivity activity(Map<String, Integer> waiters) {
		return new LockActivity(heldByName(), waiters);
	}

	RenewalStatus renewalStatus() {
		int failing = 0;
		Instant since = null;
		String error = null;
		for (RedlockEntry entry : this.entries) {
			Instant entrySince = entry.renewalFailingSince();
			if (entrySince != null) {
				failing++;
				if (since == null || entrySince.isBefore(since)) {
					since = entrySince;
					error = entry.lastRenewalError();
				}
			}
		}
		return (failing == 0) ? RenewalStatus.HEALTHY : new RenewalStatus(failing, since, error);
	}

	private record OwnerKey(LockOwner owner, String key) {
	}

	@Override
	public void close() {
		this.events.shutdown();
		try {
			this.events.awaitTermination(2, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
