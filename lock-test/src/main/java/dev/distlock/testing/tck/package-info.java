/**
 * The engine contract suite (TCK): {@link dev.distlock.testing.tck.LockServiceTck}, JUnit tests that any
 * {@link dev.distlock.core.LockService} implementation runs by extending it, as the Redis engines and the in-memory
 * engine do in this project's build.
 */
@NullMarked
package dev.distlock.testing.tck;

import org.jspecify.annotations.NullMarked;
