/**
 * Metrics and observations of locks: a {@link dev.distlock.core.LockListener} that records Micrometer meters tagged by
 * lock name (never by key, so their number stays bounded), gauges of a service's leases and waiters, and the
 * {@code Observation} contexts and conventions of an acquisition and of a locked call.
 */
@NullMarked
package dev.distlock.observability;

import org.jspecify.annotations.NullMarked;
