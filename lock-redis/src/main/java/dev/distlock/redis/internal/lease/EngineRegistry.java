package dev.distlock.redis.internal.lease;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.redlock.RedlockRegistry;
import dev.distlock.redis.internal.single.LeaseRegistry;

import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;

/**
 * The leases this process holds on one engine, and their losses: the registry base of {@link LeaseRegistry} (single
 * node) and {@link RedlockRegistry}. It finds the lease an owner ({@link LockOwner}) re-enters, lists leases for the
 * operator's view ({@link LeaseView}; a lost one stays listed until its holder releases it), and announces a loss once:
 * a WARN log, the {@link LockListener}s (each guarded: one failing listener neither stops the others nor the engine
 * thread that found the loss), the holders' lost-lease actions, and the application's event publisher, on the events
 * thread so that a slow listener cannot delay renewals. It calls nobody back: whoever ends or loses a lease also stops
 * its renewal.
 * <p>
 * Invariant: a record is in {@code heldByOwner} only while it is in {@code entries}, and it leaves
 * {@code heldByOwner} when its lease is found lost, so no lost lease is re-entered and no owner is kept past its last
 * lease.
 *
 * @param <E> the engine's record of a lease
 */
public abstract class EngineRegistry<E extends LeaseRecord> {

	private final Log logger;

	/** Every lease this process lists, by key and owner id: held ones and lost ones not yet released. */
	private final ConcurrentHashMap<HoldKey, E> entries = new ConcurrentHashMap<>();

	/**
	 * The held (neither lost nor ended) lease of each owner, key and mode: what a re-entry re-enters. Owners compare by
	 * identity.
	 */
	private final ConcurrentHashMap<OwnerKey, E> heldByOwner = new ConcurrentHashMap<>();

	private final List<LockListener> listeners;

	private final @Nullable ApplicationEventPublisher eventPublisher;

	/** Where events are published and holders' lost-lease actions run: an engine thread, lazily started. */
	private final ExecutorService events;

	public EngineRegistry(Log logger, List<LockListener> listeners, @Nullable ApplicationEventPublisher eventPublisher,
			ExecutorService events) {
		this.logger = logger;
		this.listeners = listeners;
		this.eventPublisher = eventPublisher;
		this.events = events;
	}

	/**
	 * The lease of {@code mode} that {@code owner} holds on {@code redisKey}, or null: an owner may hold a read-write
	 * lock's write lease and read lease at once (a downgrade), each re-entered on its own.
	 */
	public final @Nullable E heldBy(String redisKey, LockOwner owner, LockMode mode) {
		return this.heldByOwner.get(new OwnerKey(redisKey, owner, mode));
	}

	public final void add(E entry) {
		this.entries.put(new HoldKey(entry.redisKey, entry.owner), entry);
		this.heldByOwner.put(ownerKey(entry), entry);
	}

	/** The lease ended (released, handed over, expired, or its lost lease released): no longer listed nor re-entered. */
	public final void forget(E entry) {
		this.entries.remove(new HoldKey(entry.redisKey, entry.owner), entry);
		this.heldByOwner.remove(ownerKey(entry), entry);
	}

	/** Every lease listed: held ones and lost ones not yet released by their holders. */
	final Collection<E> entries() {
		return this.entries.values();
	}

	/**
	 * A lease was found lost, and {@code event} is the one its record made: it is no longer re-entered, and the log,
	 * the listeners, the holders' lost-lease actions (once, on the events thread) and the application hear of it. It
	 * stays listed, as lost, until its holder releases it, so that an operator sees a holder running without its lock.
	 */
	public final void announceLost(E entry, LockLostEvent event) {
		this.heldByOwner.remove(ownerKey(entry), entry);
		// the holder by its label: the owner id is what a release presents to Redis, it stays out of the log
		this.logger.warn("Lock '" + LogSafe.escape(event.key()) + "' (fencing token " + event.fencingToken()
				+ ") held by " + event.holder() + " was lost: " + event.detection().description());
		for (LockListener listener : this.listeners) {
			try {
				listener.lost(event);
			}
			catch (RuntimeException ex) {
				this.logger.warn("Lock listener failed on a lost lease", ex);
			}
		}
		LostActions.run(entry.lostActions.fire(event), event, this.events);
		ApplicationEventPublisher publisher = this.eventPublisher;
		if (publisher != null) {
			try {
				this.events.execute(() -> publisher.publishEvent(event));
			}
			catch (RuntimeException ex) { // the service was closed
				this.logger.debug("Could not publish " + event, ex);
			}
		}
	}

	/** Stop the events thread: what was announced before still runs, nothing new is accepted. */
	public void close() {
		this.events.shutdown();
	}

	/**
	 * Wait up to {@code timeout} for what was announced before {@link #close()} to be delivered; false when it was
	 * not, or the caller was interrupted (its interrupt status is kept).
	 */
	public final boolean awaitEvents(Duration timeout) {
		try {
			return this.events.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private static OwnerKey ownerKey(LeaseRecord entry) {
		return new OwnerKey(entry.redisKey, entry.lockOwner, entry.lockMode());
	}

	private record HoldKey(String redisKey, String owner) {
	}

	private record OwnerKey(String redisKey, LockOwner owner, LockMode mode) {
	}

}
