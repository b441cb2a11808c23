package dev.distlock.testing;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Arithmetic on the store's instants that saturates instead of failing: a lease time of {@code LockSettings.MAX_TTL}
 * or a wait of {@code Duration.ofSeconds(Long.MAX_VALUE)} added to now must mean "never", not an exception in the
 * middle of a change to the store.
 */
final class Instants {

	private Instants() {
	}

	/** {@code instant + duration}, or {@link Instant#MAX} when that is beyond what an {@code Instant} holds. */
	static Instant plus(Instant instant, Duration duration) {
		try {
			return instant.plus(duration);
		}
		catch (ArithmeticException | DateTimeException ex) {
			return Instant.MAX;
		}
	}

	/** The earlier of two instants, either of which may be absent (nothing due). */
	static @Nullable Instant earlier(@Nullable Instant a, @Nullable Instant b) {
		if (a == null) {
			return b;
		}
		return (b == null || a.isBefore(b)) ? a : b;
	}

	/** {@code duration} in nanoseconds, or {@link Long#MAX_VALUE} when it does not fit. */
	static long saturatedNanos(Duration duration) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

}
