package dev.distlock.redis;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LogSafe;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.util.Assert;

/**
 * The leases this process holds, and their losses: one role, the process's picture of its leases. It finds the lease an
 * owner ({@link LockOwner}) re-enters, lists leases for operators (a lost one stays listed until its holder releases it), and announces a
 * loss once: a WARN log, the {@link LockListener}s, and the application's event publisher (on its own thread, so a slow
 * listener cannot delay renewals). It calls nobody back: whoever ends or loses a lease also stops its renewal.
 */
final class LeaseRegistry {

	private static final Log logger = LogFactory.getLog(RedisLockService.class);

	/** Every lease this process lists, by key and owner: held ones and lost ones not yet released. */
	private final ConcurrentHashMap<HoldKey, LeaseEntry> entries = new ConcurrentHashMap<>();

	/**
	 * The held (neither lost nor ended) lease of each owner and key: what a re-entry re-enters. Owners compare by
	 * identity; an entry leaves this map when its lease ends or is lost, so no owner is kept past its last lease.
	 */
	private final ConcurrentHashMap<OwnerKey, LeaseEntry> heldByOwner = new ConcurrentHashMap<>();

	private final List<LockListener> listeners;

	private final @Nullable ApplicationEventPublisher eventPublisher;

	/** Where events are published and holders' lost-lease actions run: an engine thread, lazily started. */
	private final ExecutorService events;

	LeaseRegistry(List<LockListener> listeners, @Nullable ApplicationEventPublisher eventPublisher,
			ExecutorService events) {
		this.listeners = listeners;
		this.eventPublisher = eventPublisher;
		this.events = events;
	}

	/** The exclusive lease {@code owner} holds on {@code redisKey}, or null. */
	@Nullable LeaseEntry heldBy(String redisKey, LockOwner owner) {
		return heldBy(redisKey, owner, LockMode.EXCLUSIVE);
	}

	/**
	 * The lease of {@code mode} that {@code owner} holds on {@code redisKey}, or null: an owner may hold a read-write
	 * lock's write lease and read lease at once (a downgrade), each re-entered on its own.
	 */
	@Nullable LeaseEntry heldBy(String redisKey, LockOwner owner, LockMode mode) {
		return this.heldByOwner.get(new OwnerKey(redisKey, owner, mode));
	}

	void add(LeaseEntry entry) {
		this.entries.put(new HoldKey(entry.redisKey, entry.owner), entry);
		this.heldByOwner.put(new OwnerKey(entry.redisKey, entry.lockOwner, entry.mode), entry);
	}

	/** The lease ended (released, handed over or expired): no longer listed nor re-entered. */
	void forget(LeaseEntry entry) {
		this.entries.remove(new HoldKey(entry.redisKey, entry.owner), entry);
		this.heldByOwner.remove(new OwnerKey(entry.redisKey, entry.lockOwner, entry.mode), entry);
	}

	Collection<LeaseEntry> entries() {
		return this.entries.values();
	}

	/** The holder found its lease gone: record the loss (announcing it once) and return its event. */
	LockLostEvent lostOnHolderCheck(LeaseEntry entry) {
		LockLostEvent event = entry.markLostByHolder();
		if (event != null) {
			announceLost(entry, event);
			return event;
		}
		LockLostEvent earlier = entry.lostEvent();
		Assert.state(earlier != null, "A lost lease has an event");
		return earlier;
	}

	/**
	 * A lease was found lost: it is no longer re-entered, and the log, the listeners, the holders' lost-lease actions
	 * (once, on the events thread) and the application hear of it.
	 * It stays listed, as lost, until its holder releases it, so that an operator sees a holder running without its
	 * lock.
	 */
	void announceLost(LeaseEntry entry, LockLostEvent event) {
		this.heldByOwner.remove(new OwnerKey(entry.redisKey, entry.lockOwner, entry.mode), entry);
		// the holder by its label: the owner id is what a release presents to Redis, it stays out of the log
		logger.warn("Lock '" + LogSafe.escape(event.key()) + "' (fencing token " + event.fencingToken()
				+ ") held by " + event.holder() + " was lost: " + event.detection().description());
		this.listeners.forEach(listener -> listener.lost(event));
		LostActions.run(entry.lostActions.fire(event), event, this.events);
		ApplicationEventPublisher publisher = this.eventPublisher;
		ExecutorService executor = this.events;
		if (publisher != null) {
			try {
				executor.execute(() -> publisher.publishEvent(event));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not publish " + event, ex);
			}
		}
	}

	void close() {
		this.events.shutdown();
	}

	private record HoldKey(String redisKey, String owner) {
	}

	private record OwnerKey(String redisKey, LockOwner owner, LockMode mode) {
	}

}
