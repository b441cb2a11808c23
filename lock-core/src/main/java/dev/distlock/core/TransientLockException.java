package dev.distlock.core;

import org.jspecify.annotations.Nullable;

/**
 * A lock was not acquired for a reason that a later attempt may not meet, and nothing ran under it: for a
 * {@code @DistributedLock} method, the method did not run. Retrying the whole call is therefore safe as far as the
 * lock is concerned, which a lost lease ({@link LockLostException}: the work ran without exclusive access) or an
 * interrupted wait ({@link LockInterruptedException}: someone asked the thread to stop) are not.
 * <p>
 * Name this type to retry lock failures and nothing else. Spring Framework's {@code @Retryable} retries every
 * exception unless told otherwise, so give it {@code includes}:
 * <pre class="code">
 * &#64;Retryable(includes = TransientLockException.class, maxRetries = 5, delay = 200, jitter = 100)
 * public Receipt checkout(Cart cart) {
 *     return inventory.purchase(cart.sku(), cart.quantity());   // a &#64;DistributedLock method of another bean
 * }
 * </pre>
 * Put {@code @Retryable} on a caller of the locked method, not on the locked method itself: there the lock advice runs
 * outside the retry advice, and a retry would never see the failed acquisition.
 *
 * @since 0.1.0
 */
public abstract class TransientLockException extends LockException {

	/**
	 * Create a transient failure of one lock.
	 * @param key the lock key
	 * @param message what failed, naming the key
	 * @param cause the failure underneath, if any
	 */
	protected TransientLockException(String key, String message, @Nullable Throwable cause) {
		super(key, message, cause);
	}

}
