package dev.distlock.sample.inventory.stock;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockInterruptedException;

/**
 * JVM-local locks per SKU, striped so that memory stays bounded however many SKUs are seen: what a single-instance
 * service would use ({@code synchronized}, Go's {@code sync.Mutex} in the articles). Two SKUs may share a stripe, which
 * only costs some parallelism.
 */
class LocalLocks {

	private final ReentrantLock[] stripes;

	LocalLocks(int stripes) {
		this.stripes = new ReentrantLock[stripes];
		for (int i = 0; i < stripes; i++) {
			this.stripes[i] = new ReentrantLock();
		}
	}

	/**
	 * Run {@code action} holding this JVM's lock for {@code key}.
	 * @throws LockAcquisitionTimeoutException if the lock was not free within {@code wait}
	 */
	<T> T execute(String key, Duration wait, Supplier<T> action) {
		ReentrantLock lock = this.stripes[Math.floorMod(key.hashCode(), this.stripes.length)];
		try {
			if (!lock.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS)) {
				throw new LockAcquisitionTimeoutException(key, wait, "Could not acquire the JVM-local lock '" + key
						+ "' within " + wait.toMillis() + "ms: another request of this instance holds it");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockInterruptedException(key, ex);
		}
		try {
			return action.get();
		}
		finally {
			lock.unlock();
		}
	}

}
