/**
 * The in-memory engine in a JUnit Jupiter test without Spring:
 * {@link dev.distlock.testing.junit.InMemoryLocksExtension}.
 */
@NullMarked
package dev.distlock.testing.junit;

import org.jspecify.annotations.NullMarked;
