package dev.distlock.test.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Contention for the lost-update tests: the same call made many times on several threads that all start together, so
 * that an unlocked read-modify-write loses updates and a locked one must not.
 */
public final class ConcurrentCalls {

	private ConcurrentCalls() {
	}

	/**
	 * Make {@code call} {@code callsPerThread} times on each of {@code threads} threads, released together by one
	 * latch, and wait for every thread, each at most {@code deadline}; the threads are interrupted on the way out.
	 *
	 * @param threads how many threads call
	 * @param callsPerThread how many calls each thread makes
	 * @param deadline how long each thread is waited for
	 * @param call the call, given the index of its thread (0 to {@code threads - 1})
	 * @return how many calls were made: {@code threads * callsPerThread}
	 * @throws Exception what a call threw (wrapped in an {@link java.util.concurrent.ExecutionException}), or a
	 * {@link java.util.concurrent.TimeoutException} when a thread did not finish in time
	 */
	public static int run(int threads, int callsPerThread, Duration deadline, Call call) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				futures.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < callsPerThread; i++) {
						call.run(thread);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
			}
			return threads * callsPerThread;
		} finally {
			pool.shutdownNow();
		}
	}

	/** One call, on the thread of the given index. */
	@FunctionalInterface
	public interface Call {

		/**
		 * Make the call once.
		 *
		 * @param thread the index of the calling thread
		 * @throws Exception whatever the call throws
		 */
		void run(int thread) throws Exception;
	}
}
