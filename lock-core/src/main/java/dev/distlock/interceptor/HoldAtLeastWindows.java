package dev.distlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;

/**
 * The windows of {@link dev.distlock.annotation.DistributedLock#holdAtLeast() holdAtLeast} declarations: one fixed
 * lease of {@code holdAtLeast} per key, on {@code <key>:held-at-least}, taken while the caller holds the key's lock (so
 * that no other caller can take the window between the check and the take) and never released: it expires by itself,
 * timed by Redis. A window that is still there means a run began less than {@code holdAtLeast} ago: the call fails as
 * one that did not get the lock.
 * <p>
 * Windows are taken on a short-lived thread of their own. The service re-enters a lease the calling thread holds on a
 * key, and a window is never released, so a window taken on the caller's thread (a scheduler's single thread, say)
 * would be re-entered by that thread's next run instead of keeping it out. Nested calls on a key (the same thread,
 * inside the outermost call) take no window of their own.
 */
final class HoldAtLeastWindows {

	/** What follows the key in its window's key. */
	static final String SUFFIX = ":held-at-least";

	/** Per thread, how many enclosing calls of a holdAtLeast declaration hold each key. */
	private static final ThreadLocal<Map<String, Integer>> OPEN = ThreadLocal.withInitial(HashMap::new);

	/** The nesting of a call without holdAtLeast: nothing to undo. */
	private static final Nesting NONE = () -> {
	};

	private HoldAtLeastWindows() {
	}

	/** The key of {@code key}'s window. */
	static String windowKey(String key) {
		return key + SUFFIX;
	}

	/**
	 * Take the window of every key this thread does not hold through an enclosing holdAtLeast call: all of them, or
	 * none when one is still open. Nothing for an operation without holdAtLeast.
	 * @return the nesting to close when the call ends (it leaves the windows to expire)
	 * @throws LockAcquisitionTimeoutException naming the first key whose window is still open
	 * @throws dev.distlock.core.LockUnavailableException if the store did not answer
	 */
	static Nesting open(LockService service, LockOperation operation, List<String> keys) {
		Duration holdAtLeast = operation.holdAtLeast();
		if (holdAtLeast == null) {
			return NONE;
		}
		Map<String, Integer> open = OPEN.get();
		List<String> outermost = keys.stream().filter((key) -> !open.containsKey(key)).toList();
		if (!outermost.isEmpty()) {
			take(service, operation, outermost, holdAtLeast);
		}
		keys.forEach((key) -> open.merge(key, 1, Integer::sum));
		return () -> {
			Map<String, Integer> current = OPEN.get();
			keys.forEach((key) -> current.computeIfPresent(key, (k, depth) -> (depth > 1) ? depth - 1 : null));
			if (current.isEmpty()) {
				OPEN.remove();
			}
		};
	}

	private static void take(LockService service, LockOperation operation, List<String> keys, Duration holdAtLeast) {
		FutureTask<Void> task = new FutureTask<>(() -> {
			List<Lease> taken = new ArrayList<>(keys.size());
			try {
				for (String key : keys) {
					LockRequest request = new LockRequest(windowKey(key), holdAtLeast, Duration.ZERO, false,
							operation.name() + SUFFIX);
					Optional<Lease> window = service.tryAcquire(request);
					if (window.isEmpty()) {
						throw new LockAcquisitionTimeoutException(key, Duration.ZERO, "Lock '" + key + "' for "
								+ operation.description() + " was taken less than holdAtLeast ("
								+ holdAtLeast.toMillis() + "ms) ago: the window of that run is still open");
					}
					taken.add(window.get());
				}
				return null;
			}
			catch (RuntimeException | Error ex) {
				// all or none: a window taken for a call that does not run would hold off the next run for nothing
				for (Lease window : taken) {
					try {
						window.release();
					}
					catch (RuntimeException releaseFailure) {
						ex.addSuppressed(releaseFailure);
					}
				}
				throw ex;
			}
		});
		Thread thread = new Thread(task, "distlock-hold-at-least");
		thread.setDaemon(true);
		thread.start();
		// one attempt of at most a command timeout per key: waited for even when interrupted, so that a window is
		// never left behind for a call that does not run
		boolean interrupted = false;
		try {
			for (;;) {
				try {
					task.get();
					return;
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
				catch (ExecutionException ex) {
					throw OrderedAcquisition.causeOf(ex);
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** The end of a call's part in the nesting of holdAtLeast calls on its thread. */
	@FunctionalInterface
	interface Nesting extends AutoCloseable {

		@Override
		void close();

	}

}
