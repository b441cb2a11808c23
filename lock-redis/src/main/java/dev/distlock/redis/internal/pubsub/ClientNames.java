package dev.distlock.redis.internal.pubsub;

/**
 * The names of what the connections look up at run time, by name, so that no class of an absent client is loaded:
 * the types whose presence means Lettuce or Jedis, and the method a Jedis cluster client is asked for a slot's
 * connection with. Defined here, below the engine, so that the pub/sub connections need nothing of it; the engine's
 * runtime hints ({@code dev.distlock.redis.RedisEngineRuntimeHints}) register these very names for native images.
 */
public final class ClientNames {

	/** The type whose presence means Lettuce. */
	public static final String LETTUCE_TYPE = "io.lettuce.core.RedisFuture";

	/** The type whose presence means Jedis. */
	public static final String JEDIS_TYPE = "redis.clients.jedis.Jedis";

	/** The method of Jedis's cluster clients that gives the connection to the master of a slot. */
	public static final String CONNECTION_FROM_SLOT = "getConnectionFromSlot";

	private ClientNames() {
	}

}
