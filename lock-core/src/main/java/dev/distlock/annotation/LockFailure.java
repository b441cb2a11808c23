package dev.distlock.annotation;

import java.lang.reflect.Method;
import java.time.Duration;

import dev.distlock.core.LockException;

/**
 * A {@link DistributedLock @DistributedLock} call that did not get its lock.
 *
 * @param method the annotated method
 * @param arguments the call's arguments
 * @param key the evaluated key that could not be acquired
 * @param waitTime how long the call waited
 * @param cause what went wrong: {@link dev.distlock.core.LockAcquisitionTimeoutException} when the key stayed held
 * @since 0.1.0
 */
public record LockFailure(Method method, Object[] arguments, String key, Duration waitTime, LockException cause) {
}
