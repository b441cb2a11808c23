package dev.distlock.redis.internal.store;

/**
 * The types whose presence means Lettuce or Jedis, by name, so that the store loads no class of an absent client.
 * The same names as the pub/sub connections' ({@code dev.distlock.redis.internal.pubsub.ClientNames}), which the
 * engine's runtime hints register for native images; kept here too because the store may not use the pub/sub layer
 * beside it (RedisEngineRuntimeHintsTests checks that the two agree).
 */
public final class ClientTypes {

	/** The type whose presence means Lettuce. */
	public static final String LETTUCE_TYPE = "io.lettuce.core.RedisFuture";

	/** The type whose presence means Jedis. */
	public static final String JEDIS_TYPE = "redis.clients.jedis.Jedis";

	private ClientTypes() {
	}

}
