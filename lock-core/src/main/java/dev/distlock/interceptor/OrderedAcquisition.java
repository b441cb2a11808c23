package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockRequest;

/**
 * The acquisition of a call's keys one after the other within the one wait of its declaration, shared by the
 * synchronous and the future-returning paths so that both split the wait and word a timeout alike.
 */
final class OrderedAcquisition {

	private OrderedAcquisition() {
	}

	/**
	 * Acquire every key in order through {@code acquirer}, adding each lease to {@code leases} as it is granted: the
	 * first key waits the whole wait, the others what is left of it. The caller releases what {@code leases} holds
	 * when this throws.
	 * @throws LockAcquisitionTimeoutException naming the first key not acquired in time
	 */
	static void acquire(LockOperation operation, List<String> keys, Function<LockRequest, Optional<Lease>> acquirer,
			List<Lease> leases) {
		long deadline = System.nanoTime() + operation.waitTime().toNanos();
		for (String key : keys) {
			Duration remaining = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
			LockRequest request = operation.request(key, (leases.isEmpty()) ? operation.waitTime() : remaining);
			Optional<Lease> lease = acquirer.apply(request);
			if (lease.isEmpty()) {
				throw new LockAcquisitionTimeoutException(key, operation.waitTime(), "Could not acquire lock '" + key
						+ "' for " + operation.description() + " within " + operation.waitTime().toMillis()
						+ "ms: it is held by another owner");
			}
			leases.add(lease.get());
		}
	}

	/**
	 * What a task waited for on the calling thread failed with, to be thrown there: its unchecked cause as is (an
	 * {@link Error} is thrown from here), a checked one wrapped.
	 */
	static RuntimeException causeOf(ExecutionException ex) {
		Throwable cause = ex.getCause();
		if (cause instanceof RuntimeException runtime) {
			return runtime;
		}
		if (cause instanceof Error error) {
			throw error;
		}
		return new IllegalStateException(cause);
	}

}
