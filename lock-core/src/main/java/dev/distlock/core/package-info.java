/**
 * The programmatic lock API: {@link dev.distlock.core.LockService} hands out
 * {@link dev.distlock.core.Lease leases}, and the exceptions and events that tell a caller what happened to them.
 * {@link dev.distlock.core.LockOperatorView} is what an engine shows its operators (the endpoint, the health indicator
 * and the gauges read it). Nothing here depends on Redis; the Redis engine lives in {@code dev.distlock.redis}.
 */
@NullMarked
package dev.distlock.core;

import org.jspecify.annotations.NullMarked;
