package dev.distlock.redis.internal.pubsub;

import io.lettuce.core.pubsub.api.async.RedisPubSubAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;

/**
 * Whether the transport under a Lettuce pub/sub connection is up. Lettuce reconnects and subscribes again on its own,
 * but messages published meanwhile are lost; the release subscriber needs to know when that happens. Kept apart so
 * that nothing Lettuce-specific is loaded with another client.
 */
final class LettucePubSub {

	private LettucePubSub() {
	}

	/** False when the connection is Lettuce's and its transport is down (reconnecting); true otherwise. */
	static boolean isOpen(RedisConnection connection) {
		Object nativeConnection = connection.getNativeConnection();
		if (nativeConnection instanceof RedisPubSubAsyncCommands<?, ?> pubSub) {
			return pubSub.getStatefulConnection().isOpen();
		}
		return true;
	}

}
