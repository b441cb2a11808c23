package dev.distlock.test.redis;

import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Polls a condition until a deadline, for the topologies: a cluster or sentinel set converges by
 * gossip, so the only honest wait is to ask again until it agrees or the time is up.
 */
final class Await {

	private static final long POLL_MILLIS = 50;

	private Await() {
	}

	/** What a probe saw: a result, or why there is none yet. */
	record Probe<T>(@Nullable T result, String state) {

		static <T> Probe<T> done(T result) {
			return new Probe<>(result, "done");
		}

		static <T> Probe<T> notYet(String state) {
			return new Probe<>(null, state);
		}
	}

	/**
	 * Calls {@code probe} until it returns a result; a probe that throws counts as "not yet".
	 *
	 * @throws IllegalStateException naming {@code what}, the timeout and the last state seen
	 */
	static <T> T until(Duration timeout, String what, Supplier<Probe<T>> probe) {
		long deadline = System.nanoTime() + timeout.toNanos();
		String state = "not asked yet";
		RuntimeException failure = null;
		while (true) {
			try {
				Probe<T> seen = probe.get();
				T result = seen.result();
				if (result != null) {
					return result;
				}
				state = seen.state();
				failure = null;
			} catch (RuntimeException e) {
				state = e.toString();
				failure = e;
			}
			if (System.nanoTime() - deadline > 0) {
				IllegalStateException timedOut = new IllegalStateException(
						"Not " + what + " within " + timeout + "; last seen: " + state);
				if (failure != null) {
					timedOut.initCause(failure);
				}
				throw timedOut;
			}
			try {
				Thread.sleep(POLL_MILLIS);
			} catch (InterruptedException e) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting until " + what, e);
			}
		}
	}
}
