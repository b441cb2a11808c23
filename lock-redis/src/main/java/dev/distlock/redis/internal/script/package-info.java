/**
 * Internal: no compatibility promise. The bottom layer of the Redis engine: its Lua scripts and the protocol they
 * speak, the hash fields of a lease, the keys next to it, the release and hand-over messages, the arguments each
 * script takes (and their encoding for the Lettuce-native path), and which command a line of a script calls, to name
 * a command Redis's ACL refused inside one.
 * <p>
 * Types here are public only so that the engine's packages above can use them; they are not API, may change in any
 * release, and are left out of the API compatibility check and the published Javadoc. The package depends on nothing
 * else of {@code dev.distlock.redis} and on no Redis client's own types (Spring Data Redis's {@code RedisScript}
 * only), so that the scripts can be read, and tested, knowing only this package.
 */
@NullMarked
package dev.distlock.redis.internal.script;

import org.jspecify.annotations.NullMarked;
