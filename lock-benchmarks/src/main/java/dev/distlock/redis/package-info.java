/** The benchmark's access to the engine's package-private switches; see {@code EnginePathsAccess}. */
@NullMarked
package dev.distlock.redis;

import org.jspecify.annotations.NullMarked;
