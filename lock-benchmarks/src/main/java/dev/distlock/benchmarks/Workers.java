package dev.distlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.benchmarks.Contestant.Client;

import org.jspecify.annotations.Nullable;

/**
 * What every scenario runs on: worker threads started together and stopped by a deadline, their per-thread figures,
 * and the process-wide CPU, allocation and heap readings around them. Kept apart from the scenarios so that each
 * scenario class holds only what it measures.
 */
final class Workers {

	static final Runnable NOTHING = () -> {
	};

	static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

	static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean) ManagementFactory
		.getOperatingSystemMXBean();

	private Workers() {
	}

	static Run merge(List<Run> runs) {
		List<ThreadState> states = new ArrayList<>();
		long window = 0;
		long cpu = 0;
		long allocated = 0;
		for (Run run : runs) {
			states.addAll(run.states());
			window += run.window();
			cpu += run.cpuNanos();
			allocated += run.allocatedBytes();
		}
		return new Run(states, window, cpu, allocated);
	}

	static void lockLoop(Client client, long end, ThreadState state, java.util.function.Supplier<String> keys)
			throws Exception {
		for (;;) {
			long start = System.nanoTime();
			if (start - end >= 0) {
				return;
			}
			boolean acquired = client.locked(keys.get(), NOTHING);
			long done = System.nanoTime();
			if (!acquired) {
				state.timeouts++;
				continue;
			}
			state.latencies.add(done - start);
			state.operations++;
			if (done - end < 0) {
				state.inWindow++;
			}
		}
	}

	static Map<Metric, Double> throughput(Run run, Metric rate) {
		Samples latencies = new Samples();
		long inWindow = 0;
		long operations = 0;
		long timeouts = 0;
		for (ThreadState state : run.states()) {
			latencies.addAll(state.latencies);
			inWindow += state.inWindow;
			operations += state.operations;
			timeouts += state.timeouts;
		}
		Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
		metrics.put(rate, inWindow / seconds(run.window()));
		metrics.put(Metric.CPU_MICROS_PER_OP, run.cpuNanos() / 1e3 / Math.max(1, operations));
		metrics.put(Metric.ALLOCATED_BYTES_PER_OP, run.allocatedBytes() / (double) Math.max(1, operations));
		metrics.put(Metric.P50_MICROS, latencies.percentile(50) / 1e3);
		metrics.put(Metric.P99_MICROS, latencies.percentile(99) / 1e3);
		metrics.put(Metric.TIMEOUTS, (double) timeouts);
		return metrics;
	}

	/**
	 * Used heap after garbage collection: the least of five readings, each after {@code System.gc()}, so that objects
	 * that threads of the libraries happen to have in flight at one reading do not count.
	 */
	static long settledHeap() throws InterruptedException {
		long least = Long.MAX_VALUE;
		for (int i = 0; i < 5; i++) {
			System.gc();
			Thread.sleep(40);
			least = Math.min(least, MEMORY.getHeapMemoryUsage().getUsed());
		}
		return least;
	}

	static double seconds(long nanos) {
		return nanos / 1e9;
	}

	static void closeAll(List<Client> clients) {
		for (Client client : clients) {
			try {
				client.close();
			}
			catch (Exception ex) {
				System.err.println("Could not close " + client + ": " + ex);
			}
		}
	}

	/**
	 * Run {@code threads} workers at once until {@code duration} has passed (they check the end themselves), or, with
	 * no duration, until each has done its work. Fails with the first worker's failure.
	 */
	static Run runThreads(int threads, @Nullable Duration duration, Worker worker) throws Exception {
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch go = new CountDownLatch(1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<ThreadState> states = new ArrayList<>();
		List<Thread> started = new ArrayList<>();
		long[] end = new long[1];
		for (int i = 0; i < threads; i++) {
			ThreadState state = new ThreadState();
			states.add(state);
			int index = i;
			Thread thread = new Thread(() -> {
				ready.countDown();
				try {
					go.await();
					long allocatedAtStart = THREADS.getCurrentThreadAllocatedBytes();
					try {
						worker.run(index, end[0], state);
					}
					finally {
						state.allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedAtStart;
					}
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "bench-worker-" + i);
			thread.start();
			started.add(thread);
		}
		ready.await();
		Map<Long, Long> allocatedBefore = allocatedBytesByThread();
		long cpu = OS.getProcessCpuTime();
		long start = System.nanoTime();
		end[0] = start + ((duration != null) ? duration.toNanos() : Long.MAX_VALUE / 4);
		go.countDown();
		for (Thread thread : started) {
			thread.join();
		}
		long cpuUsed = OS.getProcessCpuTime() - cpu;
		long allocated = 0;
		for (Map.Entry<Long, Long> entry : allocatedBytesByThread().entrySet()) {
			allocated += entry.getValue() - allocatedBefore.getOrDefault(entry.getKey(), 0L);
		}
		for (ThreadState state : states) {
			allocated += state.allocated;
		}
		if (failure.get() != null) {
			throw new IllegalStateException("A benchmark thread failed: " + failure.get(), failure.get());
		}
		return new Run(states, (duration != null) ? duration.toNanos() : System.nanoTime() - start, cpuUsed, allocated);
	}

	/** Heap allocated so far by every live thread (the workers, which end before the count, report their own). */
	static Map<Long, Long> allocatedBytesByThread() {
		long[] ids = THREADS.getAllThreadIds();
		long[] bytes = THREADS.getThreadAllocatedBytes(ids);
		Map<Long, Long> result = new java.util.HashMap<>();
		for (int i = 0; i < ids.length; i++) {
			if (bytes[i] >= 0) {
				result.put(ids[i], bytes[i]);
			}
		}
		return result;
	}

	@FunctionalInterface
	interface Worker {

		void run(int thread, long endNanos, ThreadState state) throws Exception;

	}

	/** One worker thread's figures; latencies are the whole operation, or the wait in scenario 2. */
	static final class ThreadState {

		final Samples latencies = new Samples();

		long operations;

		long inWindow;

		long timeouts;

		long allocated;

		/** The read-write scenario's writes (its reads are {@link #latencies}, {@link #operations}, {@link #inWindow}). */
		final Samples writeLatencies = new Samples();

		long writes;

		long writesInWindow;

	}

	/** What the workers did; {@code cpuNanos} is the CPU time of the whole process while they ran. */
	record Run(List<ThreadState> states, long window, long cpuNanos, long allocatedBytes) {
	}

}
