package dev.distlock.redis.internal.support;

import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;

import dev.distlock.redis.internal.single.LeaseReleaser;

/**
 * Whether the current thread must not block: one of Reactor's non-blocking threads ({@code parallel}, or any
 * {@code NonBlocking} one) or a Netty event loop thread (Lettuce's, a web server's), the threads BlockHound watches.
 * <p>
 * Sending a command on Lettuce may park for a moment: its endpoint takes a lock shared by every thread that writes on
 * the connection (lettuce#2510). So the engine sends nothing on such a thread; work that would is handed to the
 * engine's own threads, as asynchronous acquisitions always are ({@link LeaseReleaser#releaseAsync}).
 */
public final class NonBlockingThreads {

	/** Reactor's marker of non-blocking threads. */
	public static final String REACTOR_NON_BLOCKING = "reactor.core.scheduler.NonBlocking";

	/** Netty's event loop threads (and those of its executors). */
	public static final String NETTY_THREAD = "io.netty.util.concurrent.FastThreadLocalThread";

	private static final @Nullable Class<?> reactorNonBlocking = load(REACTOR_NON_BLOCKING);

	private static final @Nullable Class<?> nettyThread = load(NETTY_THREAD);

	private NonBlockingThreads() {
	}

	/** {@return whether the current thread is one that must not block} */
	public static boolean isCurrent() {
		Thread current = Thread.currentThread();
		return (reactorNonBlocking != null && reactorNonBlocking.isInstance(current))
				|| (nettyThread != null && nettyThread.isInstance(current));
	}

	private static @Nullable Class<?> load(String name) {
		ClassLoader classLoader = NonBlockingThreads.class.getClassLoader();
		return ClassUtils.isPresent(name, classLoader) ? ClassUtils.resolveClassName(name, classLoader) : null;
	}

}
