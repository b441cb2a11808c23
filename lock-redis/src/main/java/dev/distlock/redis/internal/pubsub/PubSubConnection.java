package dev.distlock.redis.internal.pubsub;

/**
 * The pub/sub connection role of the engine's release subscriber ({@code dev.distlock.redis.ReleaseSubscriber}): open
 * it, subscribe and unsubscribe release channels, tell whether its transport is up, close it. What it hears goes to
 * {@link SubscriptionConnection.Events}. The implementations: {@link ContainerSubscriptionConnection} on Spring Data's
 * {@code RedisMessageListenerContainer} (the default), the engine's own {@link SubscriptionConnection} (see
 * {@code dev.distlock.redis.EnginePaths}), and, on a Redis Cluster with any client, {@link ShardedSubscriptions} (each
 * channel on its key's shard: {@link ShardedSubscriptionConnection} through Lettuce,
 * {@link JedisShardedSubscriptionConnection} through Jedis).
 * <p>
 * Its methods are called on one thread (the subscriber's commands thread); the events come on the client's threads.
 */
public interface PubSubConnection {

	/** Open the connection now if it is not open; failures are logged, and the next subscription tries again. */
	void connectQuietly();

	/**
	 * Subscribe to {@code channel}, opening the connection if needed; the confirmation comes as an event.
	 * @param channel the channel
	 */
	void subscribe(byte[] channel);

	/**
	 * Unsubscribe from {@code channels}; a failure is harmless (their messages find no waiter).
	 * @param channels the channels
	 */
	void unsubscribe(byte[][] channels);

	/** {@return false while the client's transport is known to be down; true when up or unknown} */
	boolean isTransportOpen();

	/** Close the connection, if one is open. */
	void close();

}
