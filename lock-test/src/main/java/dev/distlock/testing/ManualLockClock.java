package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.util.Assert;

/**
 * A {@link LockClock} that stands still until the test {@linkplain #advance(Duration) advances} it. Lease expiries,
 * wait deadlines and watchdog renewals of the stores on it happen during {@code advance}, in the order of their times:
 * when {@code advance} returns, every lease whose time passed has expired (and its waiters got it), every wait whose
 * deadline passed has ended, and every renewal that fell due has run. A thread blocked in
 * {@link dev.distlock.core.LockService#tryAcquire tryAcquire} on such a store waits until the key is released or the
 * test moves the clock past its deadline, however long that takes in real time: give such tests a timeout of their own.
 * <p>
 * Thread-safe: any thread may read or advance it.
 *
 * @since 0.1.0
 */
public final class ManualLockClock implements LockClock {

	private final List<Runnable> advanceListeners = new CopyOnWriteArrayList<>();

	private Instant now;

	/** A clock at the current wall-clock time, to the millisecond, standing still. */
	public ManualLockClock() {
		this(Instant.now().truncatedTo(ChronoUnit.MILLIS));
	}

	/**
	 * A clock at {@code start}, standing still.
	 * @param start the time it shows until it is advanced
	 */
	public ManualLockClock(Instant start) {
		Assert.notNull(start, "'start' must not be null");
		this.now = start;
	}

	@Override
	public synchronized Instant now() {
		return this.now;
	}

	/**
	 * Move the clock forward by {@code time}, and let the stores on it catch up before returning: leases expire,
	 * waits end and renewals run, in the order of their times, on the calling thread. The engines' listeners hear of
	 * it on this thread too; lost-lease actions, {@code LockLostEvent}s and asynchronous acquisitions complete on the
	 * engine's callback threads, as with the Redis engine, shortly after.
	 * @param time how far to move it; zero lets the stores catch up without moving it
	 * @throws IllegalArgumentException if {@code time} is negative: this clock never goes back
	 */
	public void advance(Duration time) {
		Assert.notNull(time, "'time' must not be null");
		Assert.isTrue(!time.isNegative(), () -> "A manual lock clock only moves forward, but was asked to move by " + time);
		synchronized (this) {
			this.now = this.now.plus(time);
		}
		this.advanceListeners.forEach(Runnable::run);
	}

	/** Run {@code listener} on the advancing thread after each advance (a store's catch-up). */
	void onAdvance(Runnable listener) {
		this.advanceListeners.add(listener);
	}

	@Override
	public String toString() {
		return "ManualLockClock[" + now() + "]";
	}

}
