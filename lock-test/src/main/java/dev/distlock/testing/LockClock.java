package dev.distlock.testing;

import java.time.Instant;

/**
 * The time an {@link InMemoryLockStore} measures lease times, expiries and wait deadlines on. Either the
 * {@linkplain #system() system clock}, on which time passes as it does for the Redis engine (a wait of 2 s ends about
 * 2 s later), or a {@linkplain #manual() manual clock}, on which time passes only when the test
 * {@linkplain ManualLockClock#advance(java.time.Duration) advances} it: a fixed lease then expires, and a waiting
 * thread's deadline passes, exactly when the test moves the clock past them, however slow the machine is.
 *
 * @since 0.1.0
 */
public sealed interface LockClock permits SystemLockClock, ManualLockClock {

	/**
	 * {@return the current time on this clock}
	 */
	Instant now();

	/**
	 * The clock on which time passes by itself: monotonic (it never goes back when the computer's wall clock is set),
	 * and within a few milliseconds of {@link Instant#now()}.
	 * @return the system clock
	 */
	static LockClock system() {
		return SystemLockClock.INSTANCE;
	}

	/**
	 * A new clock that stands still until it is {@linkplain ManualLockClock#advance(java.time.Duration) advanced},
	 * starting at the current wall-clock time.
	 * @return a manual clock
	 */
	static ManualLockClock manual() {
		return new ManualLockClock();
	}

}
