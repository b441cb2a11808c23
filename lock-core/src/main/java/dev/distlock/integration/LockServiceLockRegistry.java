package dev.distlock.integration;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockService;
import dev.distlock.core.LockServiceLock;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LogSafe;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.util.Assert;

/**
 * Spring Integration's {@link ExpirableLockRegistry} (and {@link RenewableLockRegistry}) over a {@link LockService}:
 * {@link #obtain(Object)} gives the {@link LockServiceLock} of a key, so leader election
 * ({@code LockRegistryLeaderInitiator}), the aggregator's and the idempotent receiver's locks, and
 * {@code executeLocked} exclude every instance of the application through this engine, with its fencing tokens,
 * watchdog renewals, metrics and operator view.
 * <pre>{@code
 * @Bean
 * LockServiceLockRegistry lockRegistry(LockService lockService) {
 *     return new LockServiceLockRegistry(lockService, Duration.ofSeconds(30));
 * }
 * }</pre>
 * The auto-configuration declares this bean when Spring Integration is on the classpath and the application has one
 * {@code LockService} and no {@code LockRegistry} of its own.
 * <p>
 * Locks are cached per key; the cache only saves allocations, since exclusion is the store's: a lock dropped by
 * {@link #expireUnusedOlderThan(long)} and a new one obtained for the same key exclude each other, and a thread holding
 * the key through one re-enters it through the other. Renewal needs no scheduler: the service's watchdog renews every
 * held lease, so {@link #setRenewalTaskScheduler} is ignored.
 * <p>
 * As a bean it takes part in the shutdown: it {@linkplain #stop(Runnable) stops} once its locks are released, between
 * the components that use it and the lock service, so that a leader's lock is released when its context closes and
 * another instance takes over at once rather than after the lease time.
 *
 * @since 0.1.0
 */
public class LockServiceLockRegistry
		implements ExpirableLockRegistry<LockServiceLock>, RenewableLockRegistry<LockServiceLock>, SmartLifecycle {

	/**
	 * The phase of this registry's lifecycle: it stops after the components that use it (Spring Integration's
	 * endpoints and leader initiators stop in later phases, so first) and before the lock service (the Redis engine
	 * stops at {@code DEFAULT_PHASE - 4096}).
	 */
	public static final int LIFECYCLE_PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

	/** The longest this registry's stop waits for held locks to be released. */
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

	private static final Log logger = LogFactory.getLog(LockServiceLockRegistry.class);

	private final LockService lockService;

	private final String keyPrefix;

	private final Duration ttl;

	private final ConcurrentMap<String, LockServiceLock> locks = new ConcurrentHashMap<>();

	private volatile boolean running;

	/**
	 * A registry whose lock keys are the keys given to {@link #obtain(Object)}, with leases of {@code ttl}.
	 * @param lockService the service that hands out the leases
	 * @param ttl the lease time of each hold, renewed by the watchdog while held
	 */
	public LockServiceLockRegistry(LockService lockService, Duration ttl) {
		this(lockService, "", ttl);
	}

	/**
	 * A registry whose lock keys are {@code keyPrefix} followed by the keys given to {@link #obtain(Object)} (as Spring
	 * Integration's {@code RedisLockRegistry} prefixes them with its registry key), with leases of {@code ttl}.
	 * @param lockService the service that hands out the leases
	 * @param keyPrefix put before every key, e.g. {@code "orders:"}; may be empty
	 * @param ttl the lease time of each hold, renewed by the watchdog while held; at least 1ms, at most 365 days
	 */
	public LockServiceLockRegistry(LockService lockService, String keyPrefix, Duration ttl) {
		Assert.notNull(lockService, "'lockService' must not be null");
		Assert.notNull(keyPrefix, "'keyPrefix' must not be null");
		LockSettings.checkTtl(ttl, "'ttl'");
		this.lockService = lockService;
		this.keyPrefix = keyPrefix;
		this.ttl = ttl;
	}

	/**
	 * The lock of {@code lockKey}, the same instance for the same key until it is expired as unused.
	 * @param lockKey the key, a {@code String}
	 * @return the lock
	 * @throws IllegalArgumentException if the key is not a non-blank {@code String}
	 */
	@Override
	public LockServiceLock obtain(Object lockKey) {
		Assert.isInstanceOf(String.class, lockKey, "A lock key of this registry must be a String");
		String key = (String) lockKey;
		Assert.hasText(key, "A lock key of this registry must not be blank");
		return this.locks.computeIfAbsent(key, (k) -> new LockServiceLock(this.lockService, this.keyPrefix + k, this.ttl));
	}

	/**
	 * Drop the cached locks that no thread of this process holds and that nobody held for longer than {@code age}.
	 * @param age the idle time in milliseconds beyond which an unheld lock is dropped
	 */
	@Override
	public void expireUnusedOlderThan(long age) {
		Duration idle = Duration.ofMillis(age);
		this.locks.values().removeIf((lock) -> !lock.isHeldInThisProcess() && lock.idleTime().compareTo(idle) > 0);
	}

	/**
	 * Reset the calling thread's lease on {@code lockKey} to its full lease time now (the watchdog does so anyway).
	 * @param lockKey the key, a {@code String}
	 * @throws IllegalStateException if the calling thread does not hold the key through this registry
	 * @throws dev.distlock.core.LockNotOwnedException if the lease is no longer ours
	 */
	@Override
	public void renewLock(Object lockKey) {
		heldLease(lockKey).renew();
	}

	/**
	 * Set the remaining time of the calling thread's lease on {@code lockKey} to {@code ttl}, which the watchdog renews
	 * it to from then on ({@link dev.distlock.core.ExtendMode#REPLACE}).
	 * @param lockKey the key, a {@code String}
	 * @param ttl the new lease time; at least 1ms
	 * @throws IllegalStateException if the calling thread does not hold the key through this registry
	 * @throws dev.distlock.core.LockNotOwnedException if the lease is no longer ours
	 */
	@Override
	public void renewLock(Object lockKey, Duration ttl) {
		heldLease(lockKey).extend(ttl, ExtendMode.REPLACE);
	}

	private Lease heldLease(Object lockKey) {
		Assert.isInstanceOf(String.class, lockKey, "A lock key of this registry must be a String");
		LockServiceLock lock = this.locks.get((String) lockKey);
		Lease lease = (lock != null) ? lock.currentLease().orElse(null) : null;
		if (lease == null) {
			throw new IllegalStateException("Could not renew lock '" + LogSafe.escape((String) lockKey)
					+ "': the current thread does not hold it");
		}
		return lease;
	}

	@Override
	public void start() {
		this.running = true;
	}

	/**
	 * Stop at once if no thread of this process holds a lock of this registry; otherwise only once they are all
	 * released (30 seconds at most; Spring's shutdown phase timeout may end the wait sooner).
	 */
	@Override
	public void stop() {
		stop(() -> {
		});
	}

	/**
	 * Call {@code callback} once no thread of this process holds a lock of this registry, so that the lock service
	 * (which stops later) is still there for their release: a leader initiator's selector unlocks after its initiator
	 * was stopped, and a lease released is taken over at once where one left to expire blocks the key for its ttl.
	 * @param callback told when the registry has stopped
	 */
	@Override
	public void stop(Runnable callback) {
		this.running = false;
		List<LockServiceLock> held = this.locks.values().stream().filter(LockServiceLock::isHeldInThisProcess).toList();
		if (held.isEmpty()) {
			callback.run();
			return;
		}
		Thread waiter = new Thread(() -> {
			long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
			try {
				for (LockServiceLock lock : held) {
					if (!lock.awaitUnheld(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
						logger.warn("Lock registry stops while lock '" + LogSafe.escape(lock.key())
								+ "' is still held");
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				callback.run();
			}
		}, "distlock-lock-registry-stop");
		waiter.setDaemon(true);
		waiter.start();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return LIFECYCLE_PHASE;
	}

	@Override
	public String toString() {
		return "LockServiceLockRegistry[keyPrefix='" + this.keyPrefix + "', ttl=" + this.ttl + ", " + this.locks.size()
				+ " locks cached]";
	}

}
