package dev.distlock.redis.internal.pubsub;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.function.IntFunction;

import org.jspecify.annotations.Nullable;
import redis.clients.jedis.Connection;
import redis.clients.jedis.UnifiedJedis;

/**
 * How a Jedis cluster client is asked for the connection to the master of a slot, for
 * {@link JedisShardedSubscriptionConnection}: Spring Data's {@code JedisClusterConnection} hands out a
 * {@code JedisCluster}, or from Jedis 7.1 a {@code RedisClusterClient}. Both have {@code getConnectionFromSlot(int)},
 * which their common supertype lacks; it is found by reflection, so that this class compiles and runs with every
 * Jedis 7 (Boot 4.0 brings 7.0, which has no {@code RedisClusterClient}). Loaded only when Jedis is the client.
 */
final class JedisClusterSlots {

	private JedisClusterSlots() {
	}

	/**
	 * Whether {@code nativeConnection} (a Spring cluster connection's native one) is a Jedis cluster client, whose
	 * connections {@link #connectionFromSlot} gives.
	 */
	static boolean isJedisCluster(@Nullable Object nativeConnection) {
		return nativeConnection instanceof UnifiedJedis && method(nativeConnection) != null;
	}

	/** {@code jedisCluster}'s connection to the master of a slot, by slot; the caller gives it back to the pool. */
	static IntFunction<Connection> connectionFromSlot(Object jedisCluster) {
		Method method = method(jedisCluster);
		if (method == null) {
			throw new IllegalArgumentException("Not a Jedis cluster client: " + jedisCluster.getClass().getName());
		}
		return (slot) -> {
			try {
				return (Connection) method.invoke(jedisCluster, slot);
			}
			catch (InvocationTargetException ex) {
				throw (ex.getCause() instanceof RuntimeException cause) ? cause
						: new IllegalStateException("Could not get a connection for slot " + slot, ex.getCause());
			}
			catch (IllegalAccessException ex) {
				throw new IllegalStateException("Could not get a connection for slot " + slot, ex);
			}
		};
	}

	private static @Nullable Method method(Object jedisCluster) {
		try {
			// registered for native images by the engine's RedisEngineRuntimeHints
			Method method = jedisCluster.getClass().getMethod(ClientNames.CONNECTION_FROM_SLOT, int.class);
			return Connection.class.isAssignableFrom(method.getReturnType()) ? method : null;
		}
		catch (NoSuchMethodException ex) {
			return null;
		}
	}

}
