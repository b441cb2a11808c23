package dev.distlock.redis;

import dev.distlock.redis.internal.pubsub.ContainerSubscriptionConnection;
import dev.distlock.redis.internal.pubsub.SubscriptionConnection;

/**
 * How the engine talks to Redis, for the side-by-side measurements of issue 11 (docs/benchmarks.md, "Redis path and
 * pub/sub connection"): whether lease scripts and renewals may take the Lettuce-native shortcut ({@code LettuceScripts},
 * {@code LettuceRenewals}) or go through the template only, and whether release messages come through the engine's own
 * {@link SubscriptionConnection} or Spring Data's {@code RedisMessageListenerContainer}
 * ({@link ContainerSubscriptionConnection}). Package-private: not a setting users choose.
 *
 * @param nativeScripts lease scripts and renewals on Lettuce's own commands when the client is Lettuce
 * @param listenerContainer release messages through a {@code RedisMessageListenerContainer}
 */
record EnginePaths(boolean nativeScripts, boolean listenerContainer) {

	/**
	 * What a service uses unless told otherwise: the Lettuce-native shortcut (it bought 9–17 % per operation in the
	 * uncontended benchmark) and the listener container (at least as fast as the engine's own connection on the hot
	 * key); docs/benchmarks.md, "Redis path and pub/sub connection (issue 11)".
	 */
	static final EnginePaths DEFAULT = new EnginePaths(true, true);

}
