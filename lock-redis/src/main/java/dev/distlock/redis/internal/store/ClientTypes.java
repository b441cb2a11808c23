package dev.distlock.redis.internal.store;

import org.springframework.util.ClassUtils;

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

	/** Whether Lettuce is on the class path: the store's Lettuce-native paths are taken only then. */
	static final boolean LETTUCE_PRESENT = ClassUtils.isPresent(LETTUCE_TYPE, ClientTypes.class.getClassLoader());

	/** Whether Jedis is on the class path. */
	static final boolean JEDIS_PRESENT = ClassUtils.isPresent(JEDIS_TYPE, ClientTypes.class.getClassLoader());

	private ClientTypes() {
	}

}
