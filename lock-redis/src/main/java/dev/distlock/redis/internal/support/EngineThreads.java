package dev.distlock.redis.internal.support;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Makes the engine's threads: from the application's {@link ThreadFactory} when it gave one (virtual threads, a
 * monitored factory), else platform daemon threads; either way named by their role ({@code distlock-<id>-watchdog},
 * ...), so thread dumps read the same.
 */
public final class EngineThreads {

	private final @Nullable ThreadFactory factory;

	public EngineThreads(@Nullable ThreadFactory factory) {
		this.factory = factory;
	}

	/** A new, unstarted thread named {@code name}. */
	public Thread newThread(String name, Runnable task) {
		Thread thread;
		if (this.factory != null) {
			thread = this.factory.newThread(task);
			if (thread == null) {
				throw new IllegalStateException("The lock service's thread factory returned no thread for " + name);
			}
		}
		else {
			thread = new Thread(task);
			thread.setDaemon(true);
		}
		thread.setName(name);
		return thread;
	}

	/** A factory of threads all named {@code name}, for a single-thread executor. */
	public ThreadFactory named(String name) {
		return task -> newThread(name, task);
	}

	/** {@return a pool of {@code size} threads named {@code name}, started now, with an unbounded hand-off queue} */
	public ThreadPoolExecutor boundedPool(String name, int size) {
		ThreadPoolExecutor pool = new ThreadPoolExecutor(size, size, 0, TimeUnit.MILLISECONDS,
				new LinkedTransferQueue<>(), named(name));
		pool.prestartAllCoreThreads();
		return pool;
	}

	/** {@return one thread named {@code name}, started with its first task} */
	public ExecutorService singleThread(String name) {
		return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), named(name));
	}

}
