package dev.distlock.redis.internal.wait;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * Where a waiting thread is: tests that must act only once a waiter made its last attempt before it sleeps (so that
 * nothing but a wake-up or its deadline can end the sleep) wait until it is parked in {@link Waiter#await}.
 */
public final class WaiterProbe {

	private WaiterProbe() {
	}

	/**
	 * Whether {@code thread} is parked between attempts, in {@link Waiter#await}.
	 * @param thread a thread that waits for a lock
	 * @return whether it sleeps until a wake-up, its holder's lease end or its deadline
	 */
	public static boolean parkedBetweenAttempts(Thread thread) {
		return LockSupport.getBlocker(thread) instanceof Waiter && Arrays.stream(thread.getStackTrace())
			.anyMatch(frame -> frame.getClassName().equals(Waiter.class.getName())
					&& frame.getMethodName().equals("await"));
	}

}
