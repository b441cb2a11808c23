package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockService;

import reactor.core.publisher.Mono;

/**
 * One lock library (or baseline) in the benchmark. {@link #open} creates what one application instance would have:
 * its own connections, threads and caches; scenarios that simulate several instances open several clients.
 */
interface Contestant {

	/** The name shown in the tables and charts. */
	String name();

	Kind kind();

	/** The scenarios this contestant takes part in. */
	Set<Scenario> scenarios();

	/** Open one client (one simulated application instance). */
	Client open(Target target, Options options) throws Exception;

	/**
	 * Whether this contestant's lock is fair (grants the lock in the order it was asked for): the goals compare fair
	 * contestants with each other.
	 */
	default boolean fair() {
		return false;
	}

	/**
	 * Whether this contestant's lock lives on the run's main server, where the figures per Redis server (round trips,
	 * Redis µs, lock round trips per critical section) are measured: not so for the multi-node contestants of
	 * {@code --redlock}, whose tables show "–" there.
	 */
	default boolean onMainServer() {
		return true;
	}

	/** What a contestant is, which decides the ratios it appears in. */
	enum Kind {

		/** This starter: ratios are relative to the programmatic contestant of this kind. */
		OURS,

		/** A peer library. */
		PEER,

		/** The bare-minimum lock: the reference for the "vs floor" ratios. */
		FLOOR,

		/** A bare round trip, shown for scale only. */
		BASELINE

	}

	/** Where the Redis under test listens. */
	record Target(String host, int port) {

		String uri() {
			return "redis://" + this.host + ":" + this.port;
		}

	}

	/**
	 * How a client locks: the lease time (the watchdog's renewal interval is a third of it for every library), and how
	 * long an acquisition may wait.
	 */
	record Options(Duration ttl, Duration waitTime) {
	}

	/** One simulated application instance. */
	interface Client extends AutoCloseable {

		/**
		 * Acquire {@code key} (waiting up to the options' wait), run {@code criticalSection}, release. Returns false when
		 * the lock could not be had within the wait.
		 */
		boolean locked(String key, Runnable criticalSection) throws Exception;

		/**
		 * {@link #locked} with the read lock of {@code key}'s read-write lock: shared with other readers, excluded by a
		 * writer. Only contestants that take part in {@link Scenario#READ_WRITE} support it.
		 */
		default boolean readLocked(String key, Runnable criticalSection) throws Exception {
			throw new UnsupportedOperationException(getClass().getSimpleName() + " has no read-write lock");
		}

		/**
		 * {@link #locked} with the write lock of {@code key}'s read-write lock: excludes every reader and writer. Only
		 * contestants that take part in {@link Scenario#READ_WRITE} support it.
		 */
		default boolean writeLocked(String key, Runnable criticalSection) throws Exception {
			throw new UnsupportedOperationException(getClass().getSimpleName() + " has no read-write lock");
		}

		/**
		 * {@link #locked} with one of the {@code permits} permits of {@code key}'s semaphore: up to {@code permits}
		 * holders inside at once. Only contestants that take part in {@link Scenario#PERMITS} support it.
		 */
		default boolean permitLocked(String key, int permits, Runnable criticalSection) throws Exception {
			throw new UnsupportedOperationException(getClass().getSimpleName() + " has no semaphore");
		}

		/** Acquire {@code key} without waiting, kept alive by the library's watchdog until the returned hold is released. */
		default Hold hold(String key) throws Exception {
			throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot hold leases");
		}

		/** Leases this client's process still holds, and threads still waiting (this starter's clients only). */
		default long heldOrWaiting() {
			return 0;
		}

		@Override
		void close() throws Exception;

		/** {@link #locked} through this starter's blocking API, the same for every engine it has. */
		static boolean lockedWith(LockService service, String key, Duration ttl, Duration waitTime,
				Runnable criticalSection) {
			try (Lease lease = service.acquire(key, ttl, waitTime)) {
				criticalSection.run();
				return true;
			}
			catch (LockAcquisitionTimeoutException ex) {
				return false;
			}
		}

		/** {@link #locked} through a {@link Lock}, as the peer libraries offer theirs. */
		static boolean lockedWith(Lock lock, long waitMillis, Runnable criticalSection) throws InterruptedException {
			if (!lock.tryLock(waitMillis, TimeUnit.MILLISECONDS)) {
				return false;
			}
			try {
				criticalSection.run();
				return true;
			}
			finally {
				lock.unlock();
			}
		}

	}

	/**
	 * A client that also locks without blocking: scenario 2 runs its critical sections as in-flight subscriptions
	 * instead of threads.
	 */
	interface ReactiveClient extends Client {

		/**
		 * A stream that, per subscription, acquires {@code key} (waiting up to the options' wait without holding a
		 * thread), subscribes to {@code criticalSection}, releases, and emits true; or emits false when the lock could
		 * not be had within the wait.
		 */
		Mono<Boolean> lockedReactive(String key, Mono<?> criticalSection);

	}

	/** A lease held for the watchdog and memory scenarios; released on the thread that acquired it. */
	interface Hold {

		void release() throws Exception;

	}

}
