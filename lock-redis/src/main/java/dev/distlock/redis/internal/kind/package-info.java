/**
 * The lock kinds: exclusive, fair, read and write, each a small strategy (the hooks of the single-node engine's
 * LockKind), and LockKinds, the one mapping from a lock mode to its kind. A new kind goes here, with its scripts.
 * <p>
 * Internal: not an API, left out of the Javadoc and of the API comparison (issue 27).
 */
@NullMarked
package dev.distlock.redis.internal.kind;

import org.jspecify.annotations.NullMarked;
