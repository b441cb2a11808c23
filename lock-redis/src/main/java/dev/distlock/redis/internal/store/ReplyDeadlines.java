package dev.distlock.redis.internal.store;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;

/**
 * Deadlines for replies that Lettuce completes on its event loop: {@link #within} is
 * {@link CompletableFuture#orTimeout} without the JDK's shared timer queue.
 * <p>
 * Why not {@code orTimeout}: when the reply comes in time, {@code orTimeout} cancels its timer on the thread that
 * completes the reply, which here is Lettuce's event loop, and the JDK's timer removes a cancelled task from its queue
 * under the queue's lock. Under contention that parks the event loop (every caller of {@code orTimeout} in the process
 * shares that one queue), which BlockHound reports as a blocking call on a non-blocking thread; with BlockHound
 * installed the error thrown there also left the JDK's queue lock unusable, and every later deadline hung
 * ({@code ReactiveLockServiceBlockHoundTests} caught it). Netty's hashed wheel, which Lettuce's own command timeouts
 * use, adds and cancels without a lock, so completing a reply never waits for another thread.
 * <p>
 * One daemon thread for the process, as the JDK's timer is, started when the class is initialized (when a lock
 * service on Lettuce is built), so that no first deadline waits for the thread to start. Deadlines are at most one
 * tick (10 ms) late; expiries run on that thread and only complete a future, whose continuations move to the engine's
 * own threads. Loaded only where Lettuce (and so Netty) is on the class path.
 */
final class ReplyDeadlines {

	private static final HashedWheelTimer TIMER;

	static {
		TIMER = new HashedWheelTimer((task) -> {
			Thread thread = new Thread(task, "distlock-reply-deadlines");
			thread.setDaemon(true);
			return thread;
		}, 10, TimeUnit.MILLISECONDS, 512, false);
		TIMER.start();
	}

	private ReplyDeadlines() {
	}

	/** Start the timer's thread now, off any event loop (it is started once, when this class is initialized). */
	static void start() {
		// initializing the class started it
	}

	/**
	 * Fail {@code reply} with a {@link TimeoutException} if it is not complete within {@code timeoutNanos}, as
	 * {@code orTimeout} would, taking no lock when it completes in time.
	 * @param <T> the reply's type
	 * @param reply the future to bound
	 * @param timeoutNanos the time it has, from now
	 * @return {@code reply}
	 */
	static <T> CompletableFuture<T> within(CompletableFuture<T> reply, long timeoutNanos) {
		if (reply.isDone()) {
			return reply;
		}
		Timeout deadline = TIMER.newTimeout((timeout) -> reply.completeExceptionally(new TimeoutException()),
				Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
		reply.whenComplete((value, failure) -> deadline.cancel());
		return reply;
	}

}
