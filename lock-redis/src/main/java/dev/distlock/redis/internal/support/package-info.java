/**
 * The engine's threads and back-off: what every layer above uses and nothing of the engine.
 * <p>
 * Internal: not an API, left out of the Javadoc and of the API comparison (issue 27).
 */
@NullMarked
package dev.distlock.redis.internal.support;

import org.jspecify.annotations.NullMarked;
