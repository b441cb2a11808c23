/**
 * Views of the lock service for Spring Integration: {@link dev.distlock.integration.LockServiceLockRegistry}, a
 * {@code LockRegistry} whose locks are leases of any {@link dev.distlock.core.LockService}, so that
 * {@code LockRegistryLeaderInitiator} leader election and the lock-based components run on this engine. Used only when
 * {@code spring-integration-core} is on the classpath.
 */
@NullMarked
package dev.distlock.integration;

import org.jspecify.annotations.NullMarked;
