package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;

/**
 * {@link LockClock#system()}: the wall-clock time when the class was loaded plus the {@link System#nanoTime()} elapsed
 * since, so that deadlines measured on it are not moved by a change of the computer's clock.
 */
final class SystemLockClock implements LockClock {

	static final SystemLockClock INSTANCE = new SystemLockClock();

	private final Instant origin = Instant.now();

	private final long originNanos = System.nanoTime();

	private SystemLockClock() {
	}

	@Override
	public Instant now() {
		return this.origin.plusNanos(System.nanoTime() - this.originNanos);
	}

	/** How long, in real time, until this clock reads {@code instant}: zero when it has passed. */
	Duration until(Instant instant) {
		Duration left = Duration.between(now(), instant);
		return left.isNegative() ? Duration.ZERO : left;
	}

	@Override
	public String toString() {
		return "LockClock.system()";
	}

}
