/**
 * Spring Boot support for the in-memory engine: {@link dev.distlock.testing.autoconfigure.AutoConfigureInMemoryLocks}
 * swaps the Redis engine for an {@link dev.distlock.testing.InMemoryLockService} in a {@code @SpringBootTest} or a test
 * slice, with the rest of the starter (the {@code @DistributedLock} interceptor, its startup validation, meters,
 * endpoint and health) unchanged, and gives the test its {@link dev.distlock.testing.LockScenarios}; the property
 * {@code distlock.in-memory.enabled=true} does the same for a local run of one instance, loudly.
 */
@NullMarked
package dev.distlock.testing.autoconfigure;

import org.jspecify.annotations.NullMarked;
