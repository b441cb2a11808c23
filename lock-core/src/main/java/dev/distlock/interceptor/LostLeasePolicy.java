package dev.distlock.interceptor;

/**
 * What a {@link dev.distlock.annotation.DistributedLock @DistributedLock} call does when its lease turns out to have
 * been lost while the method ran (another caller may have run concurrently).
 *
 * @since 0.1.0
 */
public enum LostLeasePolicy {

	/**
	 * Throw {@link dev.distlock.core.LockLostException} from the call after the method returned: the caller learns that
	 * its work ran without exclusive access. An exception thrown by the method itself wins; the loss is attached to it
	 * as a suppressed exception.
	 */
	THROW,

	/** Log a warning and return the method's result. The {@code LockLostEvent} is published either way. */
	WARN

}
