package dev.distlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * {@link AsyncLockService#adapt(LockService, Executor)}: a blocking engine's calls, each on a thread of the executor.
 * <p>
 * Invariant: a lease the engine grants is either delivered through the future or released, never both nor neither.
 * The task completes the future with the lease; if it cannot (the future was cancelled meanwhile) it releases the
 * lease itself. Cancelling interrupts the task's thread only while the task is inside the engine's call, under the
 * monitor of the {@link Task}, so no later work of that pooled thread is interrupted.
 */
final class ExecutorAsyncLockService implements AsyncLockService {

	private final LockService service;

	private final Executor executor;

	ExecutorAsyncLockService(LockService service, Executor executor) {
		this.service = service;
		this.executor = executor;
	}

	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		return this.service.tryAcquire(request);
	}

	@Override
	public Optional<LockHolder> holder(String key) {
		return this.service.holder(key);
	}

	@Override
	public Optional<String> modeRefusal(LockMode mode) {
		return this.service.modeRefusal(mode);
	}

	@Override
	public CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner) {
		Task task = new Task(request, owner);
		try {
			this.executor.execute(task);
		}
		catch (RejectedExecutionException ex) {
			task.result.completeExceptionally(new LockUnavailableException(request.key(),
					"The executor refused to run the acquisition of lock '" + request.key() + "'", ex));
		}
		return task.result;
	}

	private final class Task implements Runnable {

		final CompletableFuture<Optional<Lease>> result = new CompletableFuture<>() {

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				boolean cancelled = super.cancel(mayInterruptIfRunning);
				if (cancelled) {
					interruptRunner();
				}
				return cancelled;
			}

		};

		private final LockRequest request;

		private final LockOwner owner;

		private @Nullable Thread runner;

		Task(LockRequest request, LockOwner owner) {
			this.request = request;
			this.owner = owner;
		}

		@Override
		public void run() {
			if (this.result.isDone()) {
				return;
			}
			synchronized (this) {
				this.runner = Thread.currentThread();
			}
			Optional<Lease> lease;
			try (LockOwner.Binding binding = this.owner.bind()) {
				lease = ExecutorAsyncLockService.this.service.tryAcquire(this.request)
					.map(acquired -> new ExecutorLease(acquired, ExecutorAsyncLockService.this.executor));
			}
			catch (RuntimeException | Error ex) {
				clearRunner();
				this.result.completeExceptionally(ex);
				return;
			}
			clearRunner();
			if (!this.result.complete(lease)) {
				lease.ifPresent(Lease::close); // cancelled while acquiring: nobody will release it
			}
		}

		private synchronized void interruptRunner() {
			if (this.runner != null) {
				this.runner.interrupt();
			}
		}

		private void clearRunner() {
			synchronized (this) {
				this.runner = null;
			}
			if (this.result.isCancelled()) {
				Thread.interrupted(); // an interrupt meant for the acquisition must not reach the pool's next task
			}
		}

	}

	/** A lease whose non-blocking release runs on the executor. */
	private record ExecutorLease(Lease lease, Executor executor) implements Lease {

		@Override
		public String key() {
			return this.lease.key();
		}

		@Override
		public String name() {
			return this.lease.name();
		}

		@Override
		public String owner() {
			return this.lease.owner();
		}

		@Override
		public HolderLabel holder() {
			return this.lease.holder();
		}

		@Override
		public long fencingToken() {
			return this.lease.fencingToken();
		}

		@Override
		public Duration ttl() {
			return this.lease.ttl();
		}

		@Override
		public boolean isAutoRenewed() {
			return this.lease.isAutoRenewed();
		}

		@Override
		public boolean isHeld() {
			return this.lease.isHeld();
		}

		@Override
		public boolean isLost() {
			return this.lease.isLost();
		}

		@Override
		public boolean isOwned() {
			return this.lease.isOwned();
		}

		@Override
		public Instant validUntil() {
			return this.lease.validUntil();
		}

		@Override
		public void extend(Duration time, ExtendMode mode) {
			this.lease.extend(time, mode);
		}

		@Override
		public void renew() {
			this.lease.renew();
		}

		@Override
		public void release() {
			this.lease.release();
		}

		@Override
		public void close() {
			this.lease.close();
		}

		@Override
		public CompletableFuture<Void> releaseAsync() {
			try {
				return CompletableFuture.runAsync(this.lease::release, this.executor);
			}
			catch (RejectedExecutionException ex) {
				return this.lease.releaseAsync();
			}
		}

		@Override
		public void onLost(Consumer<LockLostEvent> action) {
			this.lease.onLost(action);
		}

		@Override
		public String toString() {
			return this.lease.toString();
		}

	}

}
