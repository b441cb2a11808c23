/**
 * The waiting side: release messages and the in-process waiters they wake (one subscription per channel), the
 * refused-notification report and the operator's forced release. It sees the pub/sub connections, the store and the
 * scripts, never the lease core or an engine.
 * <p>
 * Internal: not an API, left out of the Javadoc and of the API comparison (issue 27).
 */
@NullMarked
package dev.distlock.redis.internal.wait;

import org.jspecify.annotations.NullMarked;
