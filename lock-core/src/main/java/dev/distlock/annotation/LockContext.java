package dev.distlock.annotation;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

import dev.distlock.core.Lease;

/**
 * The leases of the {@link DistributedLock @DistributedLock} calls running on the current thread, innermost first. A
 * locked method reads its fencing token here and passes it to the storage it writes to.
 * <pre>{@code
 * long token = LockContext.current().orElseThrow().fencingToken();
 * }</pre>
 * The context is per thread: work the method hands to other threads must carry the lease (or its token) along. For a
 * method returning a {@code CompletableFuture} or {@code CompletionStage} that is everything after the synchronous part
 * of its body: the lease is held until the future completes, but seen here only while the body runs.
 *
 * @since 0.1.0
 */
public final class LockContext {

	private static final ThreadLocal<Deque<List<Lease>>> LEASES = new ThreadLocal<>();

	private LockContext() {
	}

	/**
	 * The lease of the innermost locked call on this thread (its first key's, if it locked several).
	 * @return the lease, or empty outside a locked call
	 */
	public static Optional<Lease> current() {
		Deque<List<Lease>> stack = LEASES.get();
		return (stack == null || stack.isEmpty()) ? Optional.empty() : Optional.of(stack.peek().get(0));
	}

	/**
	 * All leases of the innermost locked call on this thread, in acquisition order; empty outside a locked call.
	 * @return the leases, possibly none
	 */
	public static List<Lease> currentLeases() {
		Deque<List<Lease>> stack = LEASES.get();
		return (stack == null || stack.isEmpty()) ? List.of() : stack.peek();
	}

	/**
	 * Make {@code leases} the current ones until the returned scope is closed. The interceptor does this around every
	 * locked call; programmatic callers may do the same to give code they call the same view.
	 * @param leases the leases of the call, the first one being {@link #current()}; at least one
	 * @return the scope to close when the call ends, restoring the previous context
	 */
	public static Scope enter(List<Lease> leases) {
		if (leases.isEmpty()) {
			throw new IllegalArgumentException("A lock context needs at least one lease");
		}
		Deque<List<Lease>> stack = LEASES.get();
		if (stack == null) {
			stack = new ArrayDeque<>(4);
			LEASES.set(stack);
		}
		stack.push(List.copyOf(leases));
		return LockContext::exit;
	}

	private static void exit() {
		Deque<List<Lease>> stack = LEASES.get();
		if (stack != null) {
			stack.pop();
			if (stack.isEmpty()) {
				LEASES.remove();
			}
		}
	}

	/** Ends a lock context entered with {@link #enter(List)}. */
	@FunctionalInterface
	public interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
