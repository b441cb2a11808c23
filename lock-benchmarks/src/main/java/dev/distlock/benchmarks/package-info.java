/**
 * Side-by-side benchmarks of this starter against Redisson, Spring Integration and a bare {@code SET NX} floor, all
 * against one {@code redis-server} started by the run.
 */
@NullMarked
package dev.distlock.benchmarks;

import org.jspecify.annotations.NullMarked;
