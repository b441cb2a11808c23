/**
 * A lock engine for tests: {@link dev.distlock.testing.InMemoryLockService} keeps its leases in an
 * {@link dev.distlock.testing.InMemoryLockStore} instead of Redis, with the semantics of the Redis engine (lease times,
 * re-entry, fencing tokens, waits, fair and read-write locks, lost leases, the operator view), measured on a
 * {@link dev.distlock.testing.LockClock} that a test may move itself ({@link dev.distlock.testing.ManualLockClock}).
 * The store also takes a test's orders: a key held by another instance, a lease lost, a store that does not answer;
 * and it keeps a {@link dev.distlock.testing.LockHistory} of what happened.
 * <p>
 * The engine contract suite that it passes, as the Redis engines do, is in {@code dev.distlock.testing.tck}.
 */
@NullMarked
package dev.distlock.testing;

import org.jspecify.annotations.NullMarked;
