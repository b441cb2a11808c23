package dev.distlock.core;

import java.util.List;
import java.util.function.Consumer;

/**
 * What an engine tells its operators about this process: the leases it holds, the threads waiting, the lock names in
 * use and whether renewals fail. The {@code locks} actuator endpoint, the {@code locks} health indicator and the
 * per-name gauges ({@code distlock.leases.held}, {@code distlock.waiters}) read only this interface, so they work on
 * any engine that implements it: the Redis engine ({@code RedisLockService}) or an application's own.
 * <p>
 * The auto-configuration looks for exactly one bean of this type (or one primary among several). An engine that
 * implements it must be declared with a type that shows it (a {@code @Bean} method returning the engine's class, not
 * {@code LockService}), since the conditions look at bean types before the beans exist. Wrappers of an engine, such as
 * {@code ObservedLockService}, do not implement it, so the engine bean is the only candidate. Without such a bean the
 * endpoint, the health indicator and the gauges are not configured; the {@code @DistributedLock} support still is.
 * <p>
 * Every method only reads the engine's own state: none may call the store, so a hung store cannot hang a health check
 * or a scrape. Forced release, which does call the store, is a separate capability: {@link LockForceReleaser}.
 *
 * @since 0.1.0
 */
public interface LockOperatorView {

	/**
	 * {@return this engine instance's id in the store, the prefix of every owner id it writes (a random id per instance
	 * on Redis)}
	 */
	String clientId();

	/**
	 * The leases this engine holds now, and those found {@linkplain LeaseSnapshot#lost() lost} whose holders have not
	 * released them yet.
	 * @return the leases, in no particular order
	 */
	List<LeaseSnapshot> activeLeases();

	/** {@return how many leases this engine holds now, not counting lost ones; cheaper than {@code activeLeases()}} */
	int activeLeaseCount();

	/**
	 * {@return how many leases were found lost while their holders have not released them yet (still running without
	 * them)}
	 */
	int lostLeaseCount();

	/** {@return threads of this process currently waiting for a lock held elsewhere} */
	int waitingThreads();

	/**
	 * How many waiters, of all processes, are queued for the fair lock {@code key} ({@link LockMode#FAIR}), read from
	 * the store when called (one round trip); -1 when the engine has no such queue or the store did not answer.
	 * @param key the lock key
	 * @return the queue length, or -1 when not known
	 */
	default long fairQueueLength(String key) {
		return -1;
	}

	/**
	 * The leases held and the threads waiting now, per lock name, in one pass; meant to be taken once per metrics
	 * scrape rather than once per name.
	 * @return the leases and waiting threads by lock name
	 */
	LockActivity activityByName();

	/**
	 * Call {@code action} with each lock name this engine has been asked for: at once with the names seen so far, and
	 * from then on with each new name, before its first lease or waiting thread shows in {@link #activityByName()}. For
	 * meters per name, which must exist by the time their name has something to count. The action must be quick; it
	 * may be called more than once for a name.
	 * @param action called with each lock name
	 */
	void onLockName(Consumer<String> action);

	/** {@return whether the engine is failing to renew some held leases, and since when} */
	RenewalStatus renewalStatus();

}
