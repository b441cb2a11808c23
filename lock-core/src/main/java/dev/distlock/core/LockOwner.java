package dev.distlock.core;

import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

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
 * store keeps (that is the engine's own, unguessable id, {@link Lease#owner()}). Its {@linkplain #description()
 * description} (the thread's name, or what the invocation runs) is what log lines and exception messages name it by,
 * in the {@link HolderLabel} of its leases.
 *
 * @since 0.6.0
 */
public final class LockOwner {

	private static final AtomicLong SEQUENCE = new AtomicLong();

	/** The description of an owner made without one. */
	private static final String ASYNC = "async";

	private static final ThreadLocal<LockOwner> THREAD = ThreadLocal
		.withInitial(() -> new LockOwner(Thread.currentThread(), null));

	private static final ThreadLocal<@Nullable LockOwner> BOUND = new ThreadLocal<>();

	private final long id = SEQUENCE.incrementAndGet();

	/** The thread whose own owner this is, or null for an owner made by {@link #newOwner()}. */
	private final @Nullable Thread thread;

	/** The description of an owner that is not a thread's; null for a thread's own. */
	private final @Nullable String description;

	/** A thread's own: its description as last made, with the thread name it was made of. */
	private @Nullable Described described;

	private LockOwner(@Nullable Thread thread, @Nullable String description) {
		this.thread = thread;
		this.description = description;
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
	 * A fresh owner, for one invocation whose work is not confined to the calling thread, described as
	 * {@code async}.
	 * @return an owner that holds nothing yet
	 */
	public static LockOwner newOwner() {
		return new LockOwner(null, ASYNC);
	}

	/**
	 * A fresh owner, for one invocation whose work is not confined to the calling thread, described for operators:
	 * {@code async} or {@code reactive} and what it runs, such as {@code async InventoryService.reserve}. The
	 * description names the owner in the {@link HolderLabel} of its leases, in log lines and exception messages; it
	 * need not be unique.
	 * @param description what the owner is, in a few words; not blank
	 * @return an owner that holds nothing yet
	 * @since 0.7.0
	 */
	public static LockOwner newOwner(String description) {
		Assert.hasText(description, "'description' must not be blank");
		return new LockOwner(null, description);
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
		return this.thread != null;
	}

	/**
	 * How the {@link HolderLabel} of this owner's leases names it: {@code thread "<name>"} for a thread's own owner,
	 * with the thread's name as it is now (engines ask when they acquire; {@code thread #<id>} for a thread without a
	 * name, as virtual threads are by default), else the description the owner was made with ({@code async} for
	 * {@link #newOwner()}). Never the owner id the store keeps.
	 * @return the description, not blank
	 * @since 0.7.0
	 */
	public String description() {
		Thread owner = this.thread;
		if (owner == null) {
			return (this.description != null) ? this.description : ASYNC;
		}
		String name = owner.getName();
		Described last = this.described; // an immutable pair: a stale read only costs a new one
		if (last == null || !last.threadName().equals(name)) {
			// a virtual thread has no name unless given one: its id says which it is
			last = new Described(name, name.isEmpty() ? "thread #" + owner.getId() : "thread \"" + name + "\"");
			this.described = last;
		}
		return last.description();
	}

	@Override
	public String toString() {
		return ((this.thread != null) ? "thread-owner#" : "owner#") + this.id;
	}

	/** A thread name and the description made of it. */
	private record Described(String threadName, String description) {
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
