package dev.distlock.core;

import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Whose hold a lease is, for re-entry: acquiring a key the {@linkplain #current() current owner} already holds counts
 * one more hold of that lease instead of waiting for it.
 * <p>
 * By default the owner is the calling thread, as for {@link java.util.concurrent.locks.ReentrantLock}. Code whose work
 * outlives the thread that started it (a method returning a {@code CompletableFuture}, a {@code Mono}, a Kotlin
 * {@code suspend} function) takes a {@linkplain #newOwner() fresh owner} per invocation instead, carries it in its own
 * context (Reactor's {@code Context}, the coroutine context) and {@linkplain #bind() binds} it to whichever thread runs
 * a part of that work, so that nested locks re-enter and other invocations on the same thread do not.
 * <p>
 * An owner is an identity: two owners are equal only when they are the same object. It is not the owner value the
 * store keeps (that is the engine's own, unguessable id, {@link Lease#owner()}).
 *
 * @since 0.6.0
 */
public final class LockOwner {

	private static final AtomicLong SEQUENCE = new AtomicLong();

	private static final ThreadLocal<LockOwner> THREAD = ThreadLocal.withInitial(() -> new LockOwner(true));

	private static final ThreadLocal<@Nullable LockOwner> BOUND = new ThreadLocal<>();

	private final long id = SEQUENCE.incrementAndGet();

	private final boolean thread;

	private LockOwner(boolean thread) {
		this.thread = thread;
	}

	/**
	 * The owner that locks acquired on this thread now belong to: the owner {@linkplain #bind() bound} to it, else the
	 * thread's own.
	 * @return the current owner
	 */
	public static LockOwner current() {
		LockOwner bound = BOUND.get();
		return (bound != null) ? bound : THREAD.get();
	}

	/**
	 * A fresh owner, for one invocation whose work is not confined to the calling thread.
	 * @return an owner that holds nothing yet
	 */
	public static LockOwner newOwner() {
		return new LockOwner(false);
	}

	/**
	 * Make this the {@linkplain #current() current owner} of the calling thread until the returned binding is closed,
	 * which restores the previous one. Close it on the same thread, in reverse order of binding (try-with-resources).
	 * @return the binding to close
	 */
	public Binding bind() {
		LockOwner previous = BOUND.get();
		BOUND.set(this);
		return new Binding(this, previous);
	}

	/**
	 * {@return whether this is a thread's own owner rather than one made by {@link #newOwner()}}
	 */
	public boolean isThread() {
		return this.thread;
	}

	@Override
	public String toString() {
		return (this.thread ? "thread-owner#" : "owner#") + this.id;
	}

	/**
	 * An owner bound to a thread by {@link LockOwner#bind()}; closing it restores the thread's previous owner.
	 */
	public static final class Binding implements AutoCloseable {

		private final LockOwner owner;

		private final @Nullable LockOwner previous;

		private final Thread boundOn = Thread.currentThread();

		private boolean closed;

		private Binding(LockOwner owner, @Nullable LockOwner previous) {
			this.owner = owner;
			this.previous = previous;
		}

		/**
		 * Restore the owner that was current before this binding.
		 * @throws IllegalStateException if closed on another thread than the one it was bound on, or out of order
		 */
		@Override
		public void close() {
			if (this.closed) {
				return;
			}
			if (Thread.currentThread() != this.boundOn) {
				throw new IllegalStateException("The binding of " + this.owner + " was made on thread '"
						+ this.boundOn.getName() + "' and must be closed there, not on '"
						+ Thread.currentThread().getName() + "'");
			}
			if (BOUND.get() != this.owner) {
				throw new IllegalStateException("Bindings of lock owners must be closed in reverse order: " + this.owner
						+ " is not the current owner (" + current() + " is)");
			}
			this.closed = true;
			if (this.previous != null) {
				BOUND.set(this.previous);
			}
			else {
				BOUND.remove();
			}
		}

	}

}
