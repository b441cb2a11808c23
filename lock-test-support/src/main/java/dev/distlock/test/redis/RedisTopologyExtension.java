package dev.distlock.test.redis;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Injects {@link RedisCluster} and {@link RedisSentinelSet} parameters into test constructors,
 * test methods and lifecycle methods, as {@link RedisServerExtension} does for single servers.
 *
 * <p>A topology takes seconds to form, so each test class gets one of each kind it asks for (two
 * if it also asks for an {@link EmbeddedRedis} one), shared by all its methods and closed when the
 * class finishes, whether its tests passed or not. Before each injection, nodes a test left down
 * or paused are restarted or resumed and the topology is awaited healthy; roles may have changed
 * (a failed-over master stays a replica), so ask {@code masters()} or {@code master()} rather
 * than remembering them.
 *
 * <pre>{@code
 * @ExtendWith(RedisTopologyExtension.class)
 * class ClusterLockIT {
 *   @Test
 *   void locks(RedisCluster cluster) {
 *     cluster.masterFor("lock:{order-1}").execute("SET", "lock:{order-1}", "me");
 *   }
 * }
 * }</pre>
 */
public final class RedisTopologyExtension implements ParameterResolver {

	private static final Namespace NAMESPACE = Namespace.create(RedisTopologyExtension.class);

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		return type == RedisCluster.class || type == RedisSentinelSet.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		boolean embedded = RedisServerExtension.wantsEmbedded(parameterContext, extensionContext);
		ExtensionContext.Store store = RedisServerExtension.classContext(extensionContext).getStore(NAMESPACE);
		String flavour = embedded ? "embedded" : "detected";
		if (parameterContext.getParameter().getType() == RedisCluster.class) {
			RedisCluster cluster = store.computeIfAbsent("cluster:" + flavour,
					key -> embedded ? RedisCluster.builder().embedded().start() : RedisCluster.start(), RedisCluster.class);
			cluster.ensureReady();
			return cluster;
		}
		RedisSentinelSet sentinels = store.computeIfAbsent("sentinel:" + flavour,
				key -> embedded ? RedisSentinelSet.builder().embedded().start() : RedisSentinelSet.start(), RedisSentinelSet.class);
		sentinels.ensureReady();
		return sentinels;
	}
}
