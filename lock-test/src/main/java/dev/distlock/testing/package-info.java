/**
 * A lock engine for tests: {@link dev.distlock.testing.InMemoryLockService} keeps its leases in an
 * {@link dev.distlock.testing.InMemoryLockStore} instead of Redis, with the semantics of the Redis engine (lease times,
 * re-entry, fencing tokens, waits, fair and read-write locks, permits, lost leases, the operator view), measured on a
 * {@link dev.distlock.testing.LockClock} that a test may move itself ({@link dev.distlock.testing.ManualLockClock}).
 * The store also takes a test's orders: a key held by another instance, a lease lost, a store that does not answer;
 * and it keeps a {@link dev.distlock.testing.LockHistory} of what happened.
 * <p>
 * A test of an application's code says those orders in one line each with {@link dev.distlock.testing.LockScenarios},
 * on the application's lock keys, and asserts on what happened with
 * {@link dev.distlock.testing.LockAssertions#assertThat(dev.distlock.testing.LockScenarios)}. It gets the engine and
 * its scenarios from {@code dev.distlock.testing.autoconfigure} (Spring Boot tests) or {@code dev.distlock.testing.junit}
 * (JUnit tests without Spring); {@code dev.distlock.testing.redis} has the scenarios that make sense on a real Redis.
 * <p>
 * The engine contract suite that it passes, as the Redis engines do, is in {@code dev.distlock.testing.tck}.
 */
@NullMarked
package dev.distlock.testing;

import org.jspecify.annotations.NullMarked;
