/**
 * The single-node engine (standalone, Sentinel, Cluster): acquisition (blocking, asynchronous, fair queue), re-
 * entry, release and renewal, on the lease core and the waiting side. What differs per lock kind is a hook of the
 * abstract LockKind; the kinds themselves live in the package above.
 * <p>
 * Internal: not an API, left out of the Javadoc and of the API comparison (issue 27).
 */
@NullMarked
package dev.distlock.redis.internal.single;

import org.jspecify.annotations.NullMarked;
