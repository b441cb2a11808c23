package dev.distlock.redis;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LogSafe;
import dev.distlock.core.RenewalStatus;
import dev.distlock.redis.internal.lease.LeaseView;
import dev.distlock.redis.internal.lease.OwnerIds;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.util.Assert;

/**
 * What the two public engines, {@link RedisLockService} and {@link RedlockLockService}, share as services: the key
 * prefix and {@link #redisKey}, the random client id (from {@link OwnerIds}, the one owner-id source), the operator's
 * view through one {@link LeaseView}, and the lifecycle (running from construction until closed, once). Package-private
 * on purpose: the public classes stay the entry points, with the same public methods as before; this only keeps one
 * copy of them.
 * <p>
 * Invariant: {@code closed} goes from false to true once, in {@link #markClosed}; only the call that moved it runs the
 * engine's shutdown.
 */
abstract class EngineService implements LockOperatorView, SmartLifecycle, AutoCloseable {

	final String keyPrefix;

	private final String clientId;

	private final AtomicBoolean closed = new AtomicBoolean();

	EngineService(String keyPrefix) {
		this.keyPrefix = keyPrefix;
		this.clientId = OwnerIds.newClientId();
	}

	/**
	 * The owner ids of this service's new leases: the client id and 128 random bits each, or, for tests that must know
	 * an owner id in advance, the client id and {@code parts}'s values. The one source of owner ids on both engines.
	 */
	final OwnerIds ownerIds(@Nullable Supplier<String> parts) {
		return (parts != null) ? new OwnerIds(this.clientId, parts) : new OwnerIds(this.clientId);
	}

	/** The engine's operator view, made by the subclass once its registry and waiting exist. */
	abstract LeaseView view();

	/**
	 * Stop the engine: its leases are no longer renewed (they expire at their lease times), its connections and
	 * threads end. Once; later calls do nothing.
	 */
	@Override
	public abstract void close();

	/** {@return this service's random client id, the prefix of every owner id it writes} */
	@Override
	public String clientId() {
		return this.clientId;
	}

	/**
	 * {@return the key of a lock in Redis (on each node, for Redlock): {@code <prefix>:{<key>}}; the braces make it a
	 * cluster hash tag}
	 * @param key the lock key as callers give it
	 */
	public String redisKey(String key) {
		return this.keyPrefix + ":{" + key + "}";
	}

	/** {@inheritDoc} Oldest first. */
	@Override
	public List<LeaseSnapshot> activeLeases() {
		return view().activeLeases();
	}

	@Override
	public int activeLeaseCount() {
		return view().activeLeaseCount();
	}

	@Override
	public int lostLeaseCount() {
		return view().lostLeaseCount();
	}

	@Override
	public int waitingThreads() {
		return view().waitingThreads();
	}

	@Override
	public LockActivity activityByName() {
		return view().activityByName();
	}

	/** {@inheritDoc} The action runs on the thread that uses a new name first. */
	@Override
	public void onLockName(Consumer<String> action) {
		view().onLockName(action);
	}

	/** {@inheritDoc} The watchdog's renewals decide it (on Redlock, its quorum renewals). */
	@Override
	public RenewalStatus renewalStatus() {
		return view().renewalStatus();
	}

	/** The service runs from construction; a context's start has nothing to do. */
	@Override
	public void start() {
	}

	/** Stop renewing and close the pub/sub connections: as {@link #close()}. */
	@Override
	public void stop() {
		close();
	}

	@Override
	public boolean isRunning() {
		return !this.closed.get();
	}

	/** {@return the phase in which a Spring context stops the service: {@link RedisLockService#LIFECYCLE_PHASE}} */
	@Override
	public int getPhase() {
		return RedisLockService.LIFECYCLE_PHASE;
	}

	/** Count the service closed; true only for the one call that closed it, which then shuts the engine down. */
	final boolean markClosed() {
		return this.closed.compareAndSet(false, true);
	}

	/** Refuse a null request, and any request once the service is closed. */
	final void checkAcquirable(LockRequest request) {
		Assert.notNull(request, "'request' must not be null");
		if (!isRunning()) {
			throw closedFor(request.key());
		}
	}

	/** The failure of an acquisition asked of a closed service. */
	static IllegalStateException closedFor(String key) {
		return new IllegalStateException("Lock service is closed; cannot acquire '" + LogSafe.escape(key) + "'");
	}

}
