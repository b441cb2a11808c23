package dev.distlock.reactive;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Where a blocking engine's calls run for {@link ReactiveLockService#of(dev.distlock.core.LockService, int)}: a fresh daemon thread per
 * call, at most {@code limit} at once, refusing beyond that. Handing a call over never blocks the caller (a Reactor
 * thread): the bound is a non-blocking semaphore, and there is no queue whose lock could be contended. A fresh thread
 * rather than a pooled one also means an owner bound for one call can never be seen by the next.
 */
final class BlockingCallThreads implements Executor, AutoCloseable {

	private final Semaphore permits;

	private final int limit;

	private final CustomizableThreadFactory threads = new CustomizableThreadFactory("distlock-reactive-");

	private volatile boolean closed;

	BlockingCallThreads(int limit) {
		this.permits = new Semaphore(limit);
		this.limit = limit;
		this.threads.setDaemon(true);
	}

	@Override
	public void execute(Runnable task) {
		if (this.closed) {
			throw new RejectedExecutionException("The reactive lock service is closed");
		}
		if (!this.permits.tryAcquire()) {
			throw new RejectedExecutionException("All " + this.limit + " threads for blocking lock calls are busy");
		}
		try {
			this.threads.newThread(() -> {
				try {
					task.run();
				}
				finally {
					this.permits.release();
				}
			}).start();
		}
		catch (RuntimeException | Error ex) {
			this.permits.release();
			throw ex;
		}
	}

	/** Refuse new calls; those running end on their own (their waits are bounded by their requests). */
	@Override
	public void close() {
		this.closed = true;
	}

}
