package dev.distlock.redis.internal.store;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * Which wire release messages take: on a Redis Cluster, sharded pub/sub ({@code SPUBLISH}, {@code SSUBSCRIBE} on the
 * key's master, both falling back to their classic forms on Redis before 7.0); elsewhere classic pub/sub.
 * <p>
 * Why by topology and not by client: a release is heard only by waiters that subscribed the same way as it was
 * published, and services that share locks may use different clients (Lettuce and Jedis during a migration) or wrap
 * the factory. Were the choice made by client class, a Jedis waiter would never hear a Lettuce release on a Cluster,
 * and would wake only at the holder's lease time. Asked without loading a client's classes: Lettuce's and Jedis's
 * factories say it from their configuration; any other factory (an application's wrapper) is asked for a connection,
 * which is a {@link RedisClusterConnection} on a Cluster, or, if none can be had now, whether it gives a cluster
 * connection at all (a factory that is not set up for a Cluster refuses to without connecting).
 */
public final class ReleaseTopology {

	/** The release subscriber's logger, by name, as before the store had a package of its own. */
	private static final Log logger = LogFactory.getLog("dev.distlock.redis.ReleaseSubscriber");

	private ReleaseTopology() {
	}

	/**
	 * Whether {@code connectionFactory} is Lettuce's or Jedis's own factory, not an application's wrapper: Spring
	 * Data's listener container tells a non-blocking client by the factory's class ({@code ConnectionUtils.isAsync}),
	 * so behind a wrapper it took Lettuce for a blocking client, never confirmed a release channel, and its waiters
	 * polled every 20-30 ms. A wrapped factory's release subscription therefore runs on the engine's own
	 * {@code SubscriptionConnection}, which works with either kind of client.
	 * @param connectionFactory the factory
	 * @return whether it is Lettuce's or Jedis's own
	 */
	public static boolean isClientsOwnFactory(RedisConnectionFactory connectionFactory) {
		return (ClientTypes.LETTUCE_PRESENT && LettuceScripts.isLettuce(connectionFactory))
				|| (ClientTypes.JEDIS_PRESENT && connectionFactory instanceof JedisConnectionFactory);
	}

	/**
	 * Whether {@code connectionFactory} connects to a Redis Cluster: release messages are then announced with sharded
	 * pub/sub, whatever the client (the subscriber and the scripts both fall back to classic pub/sub on Redis before
	 * 7.0).
	 * @param connectionFactory the connections to Redis
	 * @return whether releases are announced on their shard
	 */
	public static boolean isCluster(RedisConnectionFactory connectionFactory) {
		if (ClientTypes.LETTUCE_PRESENT && LettuceScripts.isLettuce(connectionFactory)) {
			return LettuceScripts.isCluster(connectionFactory);
		}
		if (ClientTypes.JEDIS_PRESENT && connectionFactory instanceof JedisConnectionFactory jedis) {
			return jedis.isRedisClusterAware();
		}
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection instanceof RedisClusterConnection;
		}
		catch (RuntimeException ex) {
			logger.debug("Could not open a connection to tell the topology; asking for a cluster connection", ex);
		}
		try (RedisClusterConnection connection = connectionFactory.getClusterConnection()) {
			return connection != null;
		}
		catch (RuntimeException ex) {
			return false; // not set up for a Cluster (Spring's factories refuse with InvalidDataAccessApiUsageException)
		}
	}

}
