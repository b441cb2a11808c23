package dev.distlock.redis;

import java.util.concurrent.ThreadFactory;

import org.jspecify.annotations.Nullable;

/**
 * Makes the engine's threads: from the application's {@link ThreadFactory} when it gave one (virtual threads, a
 * monitored factory), else platform daemon threads; either way named by their role ({@code distlock-<id>-watchdog},
 * ...), so thread dumps read the same.
 */
final class EngineThreads {

	private final @Nullable ThreadFactory factory;

	EngineThreads(@Nullable ThreadFactory factory) {
		this.factory = factory;
	}

	/** A new, unstarted thread named {@code name}. */
	Thread newThread(String name, Runnable task) {
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
	ThreadFactory named(String name) {
		return task -> newThread(name, task);
	}

}
