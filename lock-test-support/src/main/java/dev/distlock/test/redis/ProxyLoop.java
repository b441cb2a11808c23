package dev.distlock.test.redis;

import java.io.Closeable;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The I/O thread of a {@link FaultProxy}, {@code fault-proxy-<port>}: accepts connections, runs the
 * tasks of the control methods, has {@link ProxyPump} move the connections on, and waits for the
 * next socket event, due chunk, task or close.
 *
 * <p>Concurrency: the thread is the only one touching sockets and {@link ProxyPump}'s loop-thread
 * state; other threads only queue tasks ({@link #submit(Task)}) and ask it to close. A task runs
 * between two rounds of socket operations and is reported done only after the round of I/O it
 * allows, so a mode change applies to data in flight inside the proxy. {@code closed},
 * {@code stopped} and the task queue are tied together by this object's monitor: no task is
 * queued after the ending loop drained them, so none waits for a loop that is gone.
 */
final class ProxyLoop {

	/** The proxy, named in the error of tasks the ending loop fails. */
	private final Object owner;
	private final Selector selector;
	private final ServerSocketChannel listener;
	private final ProxyPump pump;
	final Thread thread;
	private final Queue<Task> tasks = new ConcurrentLinkedQueue<>();
	final AtomicLong accepted = new AtomicLong();
	/** While set, new connections are reset at once; written by tasks, read by toString() too. */
	volatile boolean refusing;
	private volatile boolean closed;
	/** The loop has ended; guarded by {@code this}, so no task is queued after it drained them. */
	private boolean stopped;
	private volatile @Nullable Throwable failure;

	ProxyLoop(Object owner, Selector selector, ServerSocketChannel listener, ProxyPump pump, int port) {
		this.owner = owner;
		this.selector = selector;
		this.listener = listener;
		this.pump = pump;
		this.thread = new Thread(this::run, "fault-proxy-" + port);
		this.thread.setDaemon(true);
	}

	boolean isClosed() {
		return closed;
	}

	/** What ended the loop, if it failed. */
	@Nullable Throwable failure() {
		return failure;
	}

	/** Queues a task for the loop thread and wakes it; false if the proxy is closed or the loop has ended. */
	synchronized boolean submit(Task task) {
		if (closed || stopped) {
			return false;
		}
		tasks.add(task);
		selector.wakeup();
		return true;
	}

	/** Asks the loop to end; on its way out it resets every connection and fails queued tasks. */
	synchronized void requestClose() {
		if (!closed) {
			closed = true;
			if (!stopped) {
				selector.wakeup();
			}
		}
	}

	private void run() {
		try {
			while (!closed) {
				List<Task> applied = runTasks();
				pump.pumpAll();
				pump.flushEnded();
				applied.forEach(task -> task.done().complete(null));
				select();
				handleSelected();
			}
		} catch (Throwable e) {
			failure = e;
		} finally {
			shutdown();
		}
	}

	private List<Task> runTasks() {
		List<Task> applied = new ArrayList<>();
		for (Task task = tasks.poll(); task != null; task = tasks.poll()) {
			try {
				task.action().run();
				applied.add(task);
			} catch (RuntimeException e) {
				task.done().completeExceptionally(e);
			}
		}
		return applied;
	}

	/** Blocks until I/O is possible, the next held chunk is due, or a task or close wakes us. */
	private void select() throws IOException {
		if (!selector.selectedKeys().isEmpty()) {
			selector.selectNow(); // flushEnded() left ready keys behind
			return;
		}
		if (closed || !tasks.isEmpty()) {
			// a wakeup() from close() or call() may have been consumed by flushEnded()'s selectNow(): do not block
			selector.selectNow();
			return;
		}
		if (!pump.wakeSet()) {
			selector.select();
			return;
		}
		long millis = TimeUnit.NANOSECONDS.toMillis(pump.wakeAt() - System.nanoTime() + 999_999);
		if (millis <= 0) {
			selector.selectNow();
		} else {
			selector.select(millis);
		}
	}

	private void handleSelected() {
		for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext();) {
			SelectionKey key = it.next();
			it.remove();
			if (!key.isValid()) {
				continue;
			}
			if (key.channel() == listener) {
				acceptAll();
				continue;
			}
			pump.handle(key);
		}
	}

	private void acceptAll() {
		while (true) {
			SocketChannel client;
			try {
				client = listener.accept();
			} catch (IOException e) {
				return; // e.g. the client already gave up; the listener itself stays usable
			}
			if (client == null) {
				return;
			}
			accepted.incrementAndGet();
			if (refusing) {
				resetNow(client);
				continue;
			}
			try {
				pump.add(client);
			} catch (IOException e) {
				resetNow(client);
			}
		}
	}

	private void shutdown() {
		synchronized (this) {
			stopped = true;
		}
		pump.resetAll();
		closeQuietly(selector); // deregisters every channel
		pump.closeAll();
		closeQuietly(listener);
		IllegalStateException closedError = new IllegalStateException("Closed: " + owner, failure);
		for (Task task = tasks.poll(); task != null; task = tasks.poll()) {
			task.done().completeExceptionally(closedError);
		}
	}

	/** An abortive close: the peer gets an RST, not a FIN. The channel must not be registered. */
	static void resetNow(SocketChannel channel) {
		try {
			channel.configureBlocking(true); // SO_LINGER is only defined for blocking sockets
			channel.setOption(StandardSocketOptions.SO_LINGER, 0);
		} catch (IOException | RuntimeException e) {
			// closing it anyway
		}
		closeQuietly(channel);
	}

	static void closeQuietly(@Nullable Closeable closeable) {
		if (closeable == null) {
			return;
		}
		try {
			closeable.close();
		} catch (IOException e) {
			// nothing left to do with it
		}
	}

	/** A control method's change, run on the loop thread; {@code done} completes after the I/O it allows. */
	record Task(Runnable action, CompletableFuture<@Nullable Void> done) {
	}
}
