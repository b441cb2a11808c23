/**
 * {@link dev.distlock.annotation.DistributedLock @DistributedLock} and what a locked method can see and decide:
 * the current lease ({@link dev.distlock.annotation.LockContext}) and what happens when the lock is not acquired.
 */
@NullMarked
package dev.distlock.annotation;

import org.jspecify.annotations.NullMarked;
