/**
 * The Redlock engine, a sibling of the single-node one on the same lease core: quorum acquisition over independent
 * nodes, validity arithmetic, per-node tokens and late-grant adoption.
 * <p>
 * Internal: not an API, left out of the Javadoc and of the API comparison (issue 27).
 */
@NullMarked
package dev.distlock.redis.internal.redlock;

import org.jspecify.annotations.NullMarked;
