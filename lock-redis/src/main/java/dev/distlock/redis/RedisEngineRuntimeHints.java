package dev.distlock.redis;

import java.util.List;

import dev.distlock.redis.internal.pubsub.ClientNames;
import dev.distlock.redis.internal.script.LuaSource;
import dev.distlock.redis.internal.support.NonBlockingThreads;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What the Redis engine reads reflectively or from the class path at run time, for an application built ahead of time
 * into a GraalVM native image (on the JVM, Spring AOT needs none of it).
 * <ul>
 * <li>The Lua scripts are resources ({@link LuaSource#PATTERN}), read when the classes that declare them initialize:
 * a native image holds only the resources registered for it, and without them the engine would fail to start.</li>
 * <li>Which Redis client the application has, Lettuce or Jedis, is looked up by name ({@code ClassUtils.isPresent})
 * when the engine's classes initialize, at run time: a native image finds by name only the types registered for it,
 * and without these the engine would take Lettuce for absent and leave its native shortcuts and its own pub/sub
 * connection unused.</li>
 * <li>On a Redis Cluster through Jedis, the sharded pub/sub connection (its {@code JedisClusterSlots}) finds
 * {@code getConnectionFromSlot(int)} by reflection and calls it: on {@code JedisCluster}, and on
 * {@code RedisClusterClient} from Jedis 7.1 (both declare it; their common supertype does not). Registered by name, so
 * that the hints are the same with either Jedis, or without Jedis.</li>
 * </ul>
 * Registered in {@code META-INF/spring/aot.factories} rather than on the auto-configuration: an application may build
 * the engine itself ({@link RedisLockService#builder}).
 */
final class RedisEngineRuntimeHints implements RuntimeHintsRegistrar {

	/** The type whose presence means Lettuce. */
	static final String LETTUCE_TYPE = ClientNames.LETTUCE_TYPE;

	/** The type whose presence means Jedis. */
	static final String JEDIS_TYPE = ClientNames.JEDIS_TYPE;

	/** The Jedis cluster clients whose {@code getConnectionFromSlot(int)} is called reflectively. */
	static final List<String> JEDIS_CLUSTER_CLIENTS = List.of("redis.clients.jedis.JedisCluster",
			"redis.clients.jedis.RedisClusterClient");

	/** The method of {@link #JEDIS_CLUSTER_CLIENTS}. */
	static final String CONNECTION_FROM_SLOT = ClientNames.CONNECTION_FROM_SLOT;

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(LuaSource.PATTERN);
		hints.reflection().registerType(TypeReference.of(LETTUCE_TYPE));
		hints.reflection().registerType(TypeReference.of(JEDIS_TYPE));
		hints.reflection().registerType(TypeReference.of(NonBlockingThreads.REACTOR_NON_BLOCKING));
		hints.reflection().registerType(TypeReference.of(NonBlockingThreads.NETTY_THREAD));
		List<TypeReference> slotParameter = List.of(TypeReference.of(int.class));
		for (String client : JEDIS_CLUSTER_CLIENTS) {
			hints.reflection().registerType(TypeReference.of(client),
					(type) -> type.withMethod(CONNECTION_FROM_SLOT, slotParameter, ExecutableMode.INVOKE));
		}
	}

}
