package dev.distlock.redis;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import dev.distlock.test.redis.ConcurrentCalls;

/**
 * Deadlocks of the engine's monitors, told by name instead of a hung test: a scenario whose threads do not return in
 * time fails with the JVM's deadlocked threads and their stacks (the scenarios of issue 15 found one in the fair
 * lock's first version: a waiter's acquisition and its release channel locked in opposite orders).
 */
final class EngineDeadlocks {

	private EngineDeadlocks() {
	}

	/**
	 * {@link ConcurrentCalls#run}, failing with the deadlocked threads when a thread does not finish in time.
	 * @param threads how many threads call
	 * @param callsPerThread how many calls each makes
	 * @param deadline how long each thread is waited for
	 * @param call the call
	 * @throws Exception what a call threw
	 */
	static void run(int threads, int callsPerThread, Duration deadline, ConcurrentCalls.Call call) throws Exception {
		try {
			ConcurrentCalls.run(threads, callsPerThread, deadline, call);
		}
		catch (TimeoutException ex) {
			throw new AssertionError("A thread did not finish within " + deadline + "; deadlocked threads: " + describe(),
					ex);
		}
	}

	/** {@return the ids of the JVM's deadlocked threads} */
	static Set<Long> ids() {
		long[] ids = ManagementFactory.getThreadMXBean().findDeadlockedThreads();
		return (ids != null) ? Arrays.stream(ids).boxed().collect(Collectors.toSet()) : Set.of();
	}

	/** {@return the JVM's deadlocked threads with their stacks and the monitors they wait for; empty if none} */
	static String describe() {
		return describe(Set.of());
	}

	/**
	 * {@return the JVM's deadlocked threads but {@code earlier}, with their stacks and the monitors they wait for;
	 * empty if none}
	 * @param earlier the ids of threads found deadlocked before (by an earlier test of the JVM)
	 */
	static String describe(Set<Long> earlier) {
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		long[] ids = ids().stream().filter(id -> !earlier.contains(id)).mapToLong(Long::longValue).toArray();
		if (ids.length == 0) {
			return "";
		}
		StringBuilder description = new StringBuilder();
		for (ThreadInfo info : threads.getThreadInfo(ids, true, true)) {
			description.append(System.lineSeparator()).append('"').append(info.getThreadName()).append("\" waits for ")
				.append(info.getLockName()).append(" held by \"").append(info.getLockOwnerName()).append('"');
			for (StackTraceElement frame : info.getStackTrace()) {
				description.append(System.lineSeparator()).append("\tat ").append(frame);
			}
		}
		return description.toString();
	}

}
