/**
 * Locks for Project Reactor streams: {@link dev.distlock.reactive.ReactiveLockService}, on any
 * {@link dev.distlock.core.AsyncLockService}. Used only when Reactor is on the classpath.
 */
@NullMarked
package dev.distlock.reactive;

import org.jspecify.annotations.NullMarked;
