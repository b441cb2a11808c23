/**
 * The lease core both engines share: the lease record and handle, the registry of held leases and its operator view,
 * the renewal scheduler, the owner ids, the reconciler of unknown holds and the listing. It sees the store and the
 * scripts, never the waiting side or an engine.
 * <p>
 * Internal: not an API, left out of the Javadoc and of the API comparison (issue 27).
 */
@NullMarked
package dev.distlock.redis.internal.lease;

import org.jspecify.annotations.NullMarked;
