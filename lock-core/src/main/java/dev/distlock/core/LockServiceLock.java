package dev.distlock.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;

/**
 * A {@link Lock} on one key of a {@link LockService}: for code and libraries written against
 * {@code java.util.concurrent.locks} (Spring Integration's {@code LockRegistry}, a {@code Lock}-typed field, a
 * {@code lock()/try/finally unlock()} block) that should exclude every instance of the application, not just the threads
 * of one.
 * <pre>{@code
 * Lock lock = new LockServiceLock(lockService, "invoice:" + id, Duration.ofSeconds(30));
 * lock.lock();
 * try { ... } finally { lock.unlock(); }
 * }</pre>
 * It behaves as a {@link java.util.concurrent.locks.ReentrantLock} does, across processes: reentrant per thread (the
 * service re-enters the thread's lease), {@link #unlock()} releases the calling thread's innermost hold and throws
 * {@link IllegalMonitorStateException} when the thread holds none. Each hold is a {@link Lease} of {@code ttl} that the
 * service's watchdog renews while it is held, so the ttl only bounds how long a crashed instance blocks the key.
 * Instances are cheap and thread-safe; two instances on the same key exclude each other as any two holders do, and a
 * thread holding the key through one re-enters it through the other.
 * <p>
 * What {@code Lock} cannot say in its signatures is thrown unchecked: {@link LockUnavailableException} when the store
 * cannot be reached within a wait, and from {@link #unlock()} {@link LockLostException} when the lease was lost while
 * held (the hold is released all the same). {@link #newCondition()} is not supported: a condition would need a
 * distributed wait set.
 *
 * @since 0.1.0
 */
public final class LockServiceLock implements Lock {

	/** How long one wait of {@link #lock()} and {@link #lockInterruptibly()} lasts, in seconds, before it is asked again. */
	private static final long BOUNDED_WAIT_SECONDS = 30;

	private static final Duration BOUNDED_WAIT = Duration.ofSeconds(BOUNDED_WAIT_SECONDS);

	private final LockService lockService;

	private final String key;

	private final Duration ttl;

	private final @Nullable String name;

	/** The calling thread's holds taken through this lock, innermost on top; removed when empty. */
	private final ThreadLocal<Deque<Lease>> holds = new ThreadLocal<>();

	/** Holds open through this lock, on any thread of this process. */
	private final AtomicInteger openHolds = new AtomicInteger();

	private volatile long idleSinceNanos = System.nanoTime();

	/** Notified when the last open hold is released. */
	private final Object idle = new Object();

	/**
	 * A lock on {@code key} whose holds are leases of {@code ttl}, grouped in metrics under the default name.
	 * @param lockService the service that hands out the leases
	 * @param key the lock key
	 * @param ttl the lease time of each hold, renewed by the watchdog while held
	 * @throws IllegalArgumentException if the key is blank or the ttl shorter than 1ms
	 */
	public LockServiceLock(LockService lockService, String key, Duration ttl) {
		this(lockService, key, ttl, null);
	}

	/**
	 * A lock on {@code key} whose holds are leases of {@code ttl}, grouped in metrics and logs under {@code name}.
	 * @param lockService the service that hands out the leases
	 * @param key the lock key
	 * @param ttl the lease time of each hold, renewed by the watchdog while held
	 * @param name the metrics name, or {@code null} for {@link LockRequest#DEFAULT_NAME}
	 * @throws IllegalArgumentException if the key is blank, the ttl shorter than 1ms or the name blank
	 */
	public LockServiceLock(LockService lockService, String key, Duration ttl, @Nullable String name) {
		if (lockService == null) {
			throw new IllegalArgumentException("'lockService' must not be null for lock '" + LogSafe.escape(key) + "'");
		}
		// the same checks as every acquisition, once, so that a bad key or ttl fails here rather than at lock()
		new LockRequest(key, ttl, Duration.ZERO, true, name);
		this.lockService = lockService;
		this.key = key;
		this.ttl = ttl;
		this.name = name;
	}

	/** {@return the lock key} */
	public String key() {
		return this.key;
	}

	/** {@return the lease time of each hold} */
	public Duration ttl() {
		return this.ttl;
	}

	/**
	 * Acquire the lock, waiting as long as it takes, in waits of 30 seconds each asked again (a release wakes the wait;
	 * it does not poll). An interrupt does not end the wait; the thread's interrupt status is set again once the lock is
	 * held.
	 * @throws LockUnavailableException if the store could not be reached within one of the waits
	 */
	@Override
	public void lock() {
		boolean interrupted = false;
		try {
			for (;;) {
				try {
					if (acquire(BOUNDED_WAIT)) {
						return;
					}
				}
				catch (LockInterruptedException ex) {
					// the service set the interrupt status again: clear it to keep waiting, restore it at the end
					Thread.interrupted();
					interrupted = true;
				}
				catch (LockUnavailableException ex) {
					// an interrupt during a call to the store cancels the call: wait on, as for any interrupt
					if (!Thread.interrupted()) {
						throw ex;
					}
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Acquire the lock unless the thread is interrupted, waiting as long as it takes otherwise.
	 * @throws InterruptedException if the thread was interrupted before or while waiting (its interrupt status is
	 * cleared, as {@code Lock} specifies)
	 * @throws LockUnavailableException if the store could not be reached within one of the waits
	 */
	@Override
	public void lockInterruptibly() throws InterruptedException {
		for (;;) {
			if (tryLock(BOUNDED_WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
				return;
			}
		}
	}

	/**
	 * Acquire the lock if it is free now, in one attempt.
	 * @return whether the lock is now held by the calling thread
	 * @throws LockUnavailableException if the store did not answer
	 */
	@Override
	public boolean tryLock() {
		return acquire(Duration.ZERO);
	}

	/**
	 * Acquire the lock, waiting up to {@code time} for its holder to release it.
	 * @param time the longest wait; zero or less tries once
	 * @param unit the unit of {@code time}
	 * @return whether the lock is now held by the calling thread
	 * @throws InterruptedException if the thread was interrupted before or while waiting (its interrupt status is
	 * cleared, as {@code Lock} specifies)
	 * @throws LockUnavailableException if the store could not be reached until the wait's deadline
	 */
	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before waiting for lock '" + LogSafe.escape(this.key) + "'");
		}
		try {
			return acquire(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
		}
		catch (LockInterruptedException ex) {
			Thread.interrupted();
			throw interrupted(ex);
		}
		catch (LockUnavailableException ex) {
			// an interrupt during a call to the store cancels the call: an interrupt all the same
			if (Thread.interrupted()) {
				throw interrupted(ex);
			}
			throw ex;
		}
	}

	private InterruptedException interrupted(LockException cause) {
		InterruptedException interrupted = new InterruptedException("Interrupted while waiting for lock '"
				+ LogSafe.escape(this.key) + "'");
		interrupted.initCause(cause);
		return interrupted;
	}

	private boolean acquire(Duration wait) {
		Optional<Lease> lease = this.lockService.tryAcquire(new LockRequest(this.key, this.ttl, wait, true, this.name));
		if (lease.isEmpty()) {
			return false;
		}
		Deque<Lease> stack = this.holds.get();
		if (stack == null) {
			stack = new ArrayDeque<>(2);
			this.holds.set(stack);
		}
		stack.push(lease.get());
		this.openHolds.incrementAndGet();
		return true;
	}

	/**
	 * Release the calling thread's innermost hold; the key is freed when its last hold is released. An interrupted
	 * thread unlocks too (its interrupt status is kept).
	 * @throws IllegalMonitorStateException if the calling thread holds the key through no hold of this lock
	 * @throws LockLostException if the lease was lost while held (the hold counts as released)
	 * @throws LockUnavailableException if the store did not answer (the hold counts as released, and what the store
	 * may still have of the lease expires at its lease time)
	 */
	@Override
	public void unlock() {
		Deque<Lease> stack = this.holds.get();
		if (stack == null || stack.isEmpty()) {
			throw new IllegalMonitorStateException("The current thread (" + Thread.currentThread().getName()
					+ ") does not hold lock '" + LogSafe.escape(this.key) + "'");
		}
		Lease lease = stack.pop();
		if (stack.isEmpty()) {
			this.holds.remove();
		}
		// an interrupted thread still unlocks, as with ReentrantLock: the client would cancel the release's call to the
		// store at once, and the lease would block the key until its ttl
		boolean interrupted = Thread.interrupted();
		try {
			lease.release();
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
			// counted only once the release is done, so that awaitUnheld does not let the service stop under it
			if (this.openHolds.decrementAndGet() == 0) {
				this.idleSinceNanos = System.nanoTime();
				synchronized (this.idle) {
					this.idle.notifyAll();
				}
			}
		}
	}

	/**
	 * Not supported: a condition would need a wait set shared by every instance.
	 * @return never
	 * @throws UnsupportedOperationException always
	 */
	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException("Lock '" + LogSafe.escape(this.key)
				+ "' is a distributed lock: it has no conditions "
				+ "(a condition would need a wait set shared by every instance); signal through the store instead");
	}

	/** {@return whether the calling thread holds the key through this lock} */
	public boolean isHeldByCurrentThread() {
		return getHoldCount() > 0;
	}

	/**
	 * Whether some thread of this process holds the key through this lock (as {@code ReentrantLock.isLocked()}); it
	 * does not ask the store, whose {@link LockService#isLocked(String)} sees every instance's holders.
	 * @return whether a thread of this process holds the key through this lock
	 */
	public boolean isHeldInThisProcess() {
		return this.openHolds.get() > 0;
	}

	/** {@return how many holds the calling thread has open through this lock: zero when it holds none} */
	public int getHoldCount() {
		Deque<Lease> stack = this.holds.get();
		return (stack != null) ? stack.size() : 0;
	}

	/**
	 * The lease of the calling thread's innermost hold: its fencing token, {@link Lease#extend extension} or
	 * {@link Lease#isOwned() ownership check}.
	 * @return the lease, or empty when the calling thread holds the key through no hold of this lock
	 */
	public Optional<Lease> currentLease() {
		Deque<Lease> stack = this.holds.get();
		return (stack == null || stack.isEmpty()) ? Optional.empty() : Optional.of(stack.peek());
	}

	/**
	 * How long no thread of this process has held the key through this lock: zero while one does, otherwise the time
	 * since the last hold was released (or since this lock was made). What a registry uses to drop idle locks.
	 * @return the idle time
	 */
	public Duration idleTime() {
		if (this.openHolds.get() > 0) {
			return Duration.ZERO;
		}
		return Duration.ofNanos(Math.max(0, System.nanoTime() - this.idleSinceNanos));
	}

	/**
	 * Wait until no thread of this process holds the key through this lock, for a graceful shutdown: holders finish
	 * their critical sections and release, rather than leave their leases to expire.
	 * @param timeout the longest wait
	 * @return whether no thread holds the key through this lock now
	 * @throws InterruptedException if the waiting thread was interrupted
	 */
	public boolean awaitUnheld(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.idle) {
			while (this.openHolds.get() > 0) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				TimeUnit.NANOSECONDS.timedWait(this.idle, left);
			}
			return true;
		}
	}

	@Override
	public String toString() {
		return "LockServiceLock[key=" + this.key + ", ttl=" + this.ttl + ", holds by this thread=" + getHoldCount() + "]";
	}

}
