package dev.distlock.testing;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The threads of every in-memory store of the JVM: daemon threads, started when first needed and shared, so that the
 * many short-lived stores of a test suite need no closing. One timer thread runs the catch-up of stores on the system
 * clock when their next expiry, deadline or renewal is due; a pool of callback threads completes asynchronous
 * acquisitions and runs lost-lease actions and events, so that neither runs a caller's code on a thread that holds a
 * store's monitor or on the timer.
 */
final class CallbackThreads {

	private static final Log logger = LogFactory.getLog(CallbackThreads.class);

	/** The timer: one thread; a store's pending catch-up is cancelled when an earlier one is scheduled. */
	static final ScheduledThreadPoolExecutor TIMER = timer();

	/** Completions and lost-lease actions: as many threads as are busy at once, each gone after a minute idle. */
	static final ExecutorService CALLBACKS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
			new SynchronousQueue<>(), daemon("distlock-in-memory-callback-"));

	private CallbackThreads() {
	}

	/**
	 * An executor that runs its tasks one at a time, in the order given, on the callback threads: a store's events and
	 * lost-lease actions, which a listener may expect in the order of the losses.
	 */
	static Executor serial() {
		return new SerialExecutor();
	}

	private static ScheduledThreadPoolExecutor timer() {
		ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("distlock-in-memory-timer-"));
		timer.setRemoveOnCancelPolicy(true);
		return timer;
	}

	private static ThreadFactory daemon(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (task) -> {
			Thread thread = new Thread(task, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/** Runs a task, logging what it throws: nothing it does may end the thread that runs it. */
	static void runLogged(Runnable task, String what) {
		try {
			task.run();
		}
		catch (RuntimeException | Error ex) {
			logger.warn("In-memory lock engine: " + what + " failed", ex);
		}
	}

	/** Tasks one at a time, in order, on {@link #CALLBACKS}; guarded by {@code this}. */
	private static final class SerialExecutor implements Executor {

		private final Queue<Runnable> tasks = new ArrayDeque<>();

		private boolean draining;

		@Override
		public void execute(Runnable task) {
			synchronized (this) {
				this.tasks.add(task);
				if (this.draining) {
					return;
				}
				this.draining = true;
			}
			CALLBACKS.execute(this::drain);
		}

		private void drain() {
			for (;;) {
				@Nullable Runnable next;
				synchronized (this) {
					next = this.tasks.poll();
					if (next == null) {
						this.draining = false;
						return;
					}
				}
				runLogged(next, "a lost-lease action or event");
			}
		}

	}

}
