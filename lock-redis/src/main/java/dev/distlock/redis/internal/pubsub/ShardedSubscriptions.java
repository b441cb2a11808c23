package dev.distlock.redis.internal.pubsub;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * The pub/sub connection role on a Redis Cluster, whatever the client: release channels subscribed on their key's
 * shard, as the scripts announce releases there ({@code dev.distlock.redis.ReleaseTopology}). Lettuce's own factory
 * subscribes through its cluster client; any other factory is asked, on the first connection, what its connections
 * are: Jedis's cluster client ({@link JedisShardedSubscriptionConnection}), or Lettuce's behind a factory that wraps it
 * ({@link ShardedSubscriptionConnection#ofConnections}, through a Spring connection's pub/sub connection). A factory
 * whose connections are neither cannot subscribe on a shard: that is logged once at WARN with the reason, and its
 * channels are never confirmed, so that waiters poll at the short interval (see "Release messages on a Cluster" in
 * docs/topologies.md) rather than wait for messages that cannot come.
 * <p>
 * Its methods are called on one thread (the subscriber's commands thread).
 */
public final class ShardedSubscriptions implements PubSubConnection {

	private static final Log logger = LogFactory.getLog(PubSubSupport.LOG_CATEGORY);

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent(ClientNames.LETTUCE_TYPE,
			ShardedSubscriptions.class.getClassLoader());

	private static final boolean JEDIS_PRESENT = ClassUtils.isPresent(ClientNames.JEDIS_TYPE,
			ShardedSubscriptions.class.getClassLoader());

	private final RedisConnectionFactory connectionFactory;

	private final String keepAliveChannel;

	private final SubscriptionConnection.Events events;

	private final PubSubThreads threads;

	private final String threadName;

	/** Chosen at the first connection that could be opened; confined to the commands thread. */
	private @Nullable PubSubConnection delegate;

	private ShardedSubscriptions(RedisConnectionFactory connectionFactory, String keepAliveChannel,
			SubscriptionConnection.Events events, PubSubThreads threads, String threadName) {
		this.connectionFactory = connectionFactory;
		this.keepAliveChannel = keepAliveChannel;
		this.events = events;
		this.threads = threads;
		this.threadName = threadName;
	}

	/** The sharded pub/sub connection for a factory that connects to a Redis Cluster. */
	public static PubSubConnection of(RedisConnectionFactory connectionFactory, String keepAliveChannel,
			SubscriptionConnection.Events events, PubSubThreads threads, String threadName) {
		if (LETTUCE_PRESENT && ShardedSubscriptionConnection.isLettuceFactory(connectionFactory)) {
			return ShardedSubscriptionConnection.of(connectionFactory, keepAliveChannel, events);
		}
		return new ShardedSubscriptions(connectionFactory, keepAliveChannel, events, threads, threadName);
	}

	private PubSubConnection delegate() {
		PubSubConnection current = this.delegate;
		if (current == null) {
			current = choose();
			this.delegate = current;
		}
		return current;
	}

	/** What the factory's connections allow; throws while no connection can be opened (it is asked again later). */
	private PubSubConnection choose() {
		String nativeType;
		try (RedisConnection probe = this.connectionFactory.getConnection()) {
			Object nativeConnection = probe.getNativeConnection();
			if (JEDIS_PRESENT && JedisClusterSlots.isJedisCluster(nativeConnection)) {
				return JedisShardedSubscriptionConnection.of(nativeConnection, this.events, this.threads,
						this.threadName);
			}
			if (LETTUCE_PRESENT && ShardedSubscriptionConnection.isLettuceCluster(nativeConnection)) {
				return ShardedSubscriptionConnection.ofConnections(this.connectionFactory, this.keepAliveChannel,
						this.events);
			}
			nativeType = probe.getClass().getName() + " over "
					+ ((nativeConnection != null) ? nativeConnection.getClass().getName() : "no native connection");
		}
		logger.warn("Release messages on this Redis Cluster are sharded (SPUBLISH), but the connections of "
				+ this.connectionFactory + " (" + nativeType + ") are neither Lettuce's nor Jedis's cluster "
				+ "connections, so they cannot subscribe on a key's shard: waiters poll every 20-30 ms instead of "
				+ "hearing releases");
		return new Unheard();
	}

	@Override
	public void connectQuietly() {
		try {
			delegate().connectQuietly();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not open the release subscription connection yet", ex);
		}
	}

	@Override
	public void subscribe(byte[] channel) {
		delegate().subscribe(channel);
	}

	@Override
	public void unsubscribe(byte[][] channels) {
		PubSubConnection current = this.delegate;
		if (current != null) {
			current.unsubscribe(channels);
		}
	}

	@Override
	public boolean isTransportOpen() {
		PubSubConnection current = this.delegate;
		return current == null || current.isTransportOpen();
	}

	@Override
	public void close() {
		PubSubConnection current = this.delegate;
		if (current != null) {
			current.close();
		}
	}

	/** No subscription can be made: channels stay unconfirmed, and their waiters poll. */
	private static final class Unheard implements PubSubConnection {

		@Override
		public void connectQuietly() {
		}

		@Override
		public void subscribe(byte[] channel) {
		}

		@Override
		public void unsubscribe(byte[][] channels) {
		}

		@Override
		public boolean isTransportOpen() {
			return true;
		}

		@Override
		public void close() {
		}

	}

}
