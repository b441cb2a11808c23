package dev.distlock.redis.internal.pubsub;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.cluster.pubsub.api.async.RedisClusterPubSubAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;

/**
 * The pub/sub connection role on a Redis Cluster (7.0 or later, through Lettuce) with sharded pub/sub: each release
 * channel is subscribed with {@code SSUBSCRIBE} on the connection to the master that owns its slot (the channel
 * carries its key's hash tag), where the release scripts {@code SPUBLISH}. A release is then heard on its own shard,
 * without crossing the cluster bus to a node of the client's choosing, and without being broadcast to every node.
 * <p>
 * Lettuce's cluster pub/sub connection keeps one connection per node and propagates their messages to the listener
 * added here. The keep-alive channel is subscribed classically on the cluster connection's default node, and tells,
 * as on one server, when the client subscribed anew after a reconnect. After a failover the owner of a slot changes:
 * channels mapped to a node that no longer owns their slot are forgotten, so that the transport reads as open again
 * once the topology is refreshed, and the release subscriber subscribes them again, now on the new owner.
 * <p>
 * Where the cluster pub/sub connection comes from is a {@link Source}: Lettuce's cluster client, for Lettuce's own
 * factory, or, for a factory that wraps one (an application's decorator, which neither shows Lettuce's type nor its
 * client), the pub/sub connection of a Spring connection that subscribed, which Spring's connection hands out as its
 * native connection while subscribed.
 * <p>
 * Its methods are called on one thread (the subscriber's commands thread); the events come on the client's threads.
 */
final class ShardedSubscriptionConnection implements PubSubConnection {

	/** Where the cluster pub/sub connection comes from, and how it is given back. */
	interface Source {

		/**
		 * A new cluster pub/sub connection with byte array keys and values, to be given back with {@link #close}.
		 * @param keepAliveChannel the channel the connection is subscribed to for as long as it lives
		 */
		StatefulRedisClusterPubSubConnection<byte[], byte[]> open(byte[] keepAliveChannel);

		/** Give {@code connection}, which {@link #open} returned, back. */
		void close(StatefulRedisClusterPubSubConnection<byte[], byte[]> connection);

	}

	private static final Log logger = LogFactory.getLog(PubSubSupport.LOG_CATEGORY);

	private static final long TIMEOUT_SECONDS = 10;

	private static final LettuceExceptionConverter EXCEPTION_CONVERTER = new LettuceExceptionConverter();

	private final Source source;

	private final byte[] keepAliveChannel;

	private final SubscriptionConnection.Events events;

	private final Listener listener = new Listener();

	/** The node each subscribed channel was sent to, by channel. */
	private final Map<String, String> nodeByChannel = new ConcurrentHashMap<>();

	private volatile @Nullable StatefulRedisClusterPubSubConnection<byte[], byte[]> connection;

	private volatile boolean confirmed;

	/** Set once a node answered SSUBSCRIBE as an unknown command (Redis before 7.0): classic SUBSCRIBE on the owner. */
	private volatile boolean classic;

	private ShardedSubscriptionConnection(Source source, String keepAliveChannel, SubscriptionConnection.Events events) {
		this.source = source;
		this.keepAliveChannel = keepAliveChannel.getBytes(StandardCharsets.UTF_8);
		this.events = events;
	}

	/**
	 * The connection for Lettuce's own factory on a Redis Cluster, from its cluster client; a signature without Lettuce
	 * types, so that callers load no Lettuce class when another client is used.
	 */
	static PubSubConnection of(RedisConnectionFactory connectionFactory, String keepAliveChannel,
			SubscriptionConnection.Events events) {
		return new ShardedSubscriptionConnection(new ClientSource((LettuceConnectionFactory) connectionFactory),
				keepAliveChannel, events);
	}

	/** Whether {@code connectionFactory} is Lettuce's own factory (not one that wraps it): {@link #of} takes it. */
	static boolean isLettuceFactory(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory;
	}

	/**
	 * Whether {@code nativeConnection} (the native connection of a connection that {@code connectionFactory} gave) is
	 * Lettuce's cluster connection: {@link #ofConnections} can then subscribe through the factory's connections.
	 */
	static boolean isLettuceCluster(@Nullable Object nativeConnection) {
		return nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?>;
	}

	/**
	 * The connection for a factory that wraps Lettuce's on a Redis Cluster ({@link #isLettuceCluster}): the cluster
	 * pub/sub connection of a Spring connection that subscribed the keep-alive channel.
	 */
	static PubSubConnection ofConnections(RedisConnectionFactory connectionFactory, String keepAliveChannel,
			SubscriptionConnection.Events events) {
		return new ShardedSubscriptionConnection(new ConnectionSource(connectionFactory), keepAliveChannel, events);
	}

	@Override
	public void connectQuietly() {
		try {
			connection();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not open the release subscription connection yet", ex);
		}
	}

	@Override
	public void subscribe(byte[] channel) {
		StatefulRedisClusterPubSubConnection<byte[], byte[]> cluster = connection();
		RedisClusterNode owner = cluster.getPartitions().getPartitionBySlot(SlotHash.getSlot(channel));
		if (owner == null) {
			throw new IllegalStateException("No node serves the slot of " + text(channel) + " yet");
		}
		StatefulRedisPubSubConnection<byte[], byte[]> node = cluster.getConnection(owner.getNodeId());
		this.nodeByChannel.put(text(channel), owner.getNodeId());
		if (this.classic) {
			await(node.async().subscribe(channel).toCompletableFuture(), "SUBSCRIBE " + text(channel));
			return;
		}
		try {
			await(node.async().ssubscribe(channel).toCompletableFuture(), "SSUBSCRIBE " + text(channel));
		}
		catch (RuntimeException ex) {
			if (!PubSubSupport.isUnknownCommand(ex)) {
				throw ex;
			}
			// Redis before 7.0: the scripts fall back to PUBLISH too, which reaches a subscriber on the key's master
			// without crossing the cluster bus
			this.classic = true;
			await(node.async().subscribe(channel).toCompletableFuture(), "SUBSCRIBE " + text(channel));
		}
	}

	@Override
	public void unsubscribe(byte[][] channels) {
		StatefulRedisClusterPubSubConnection<byte[], byte[]> cluster = this.connection;
		if (cluster == null) {
			return;
		}
		for (byte[] channel : channels) {
			String nodeId = this.nodeByChannel.remove(text(channel));
			if (nodeId == null) {
				continue;
			}
			try {
				if (this.classic) {
					cluster.getConnection(nodeId).async().unsubscribe(channel);
				}
				else {
					cluster.getConnection(nodeId).async().sunsubscribe(channel);
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Could not unsubscribe an idle release channel", ex);
			}
		}
	}

	/**
	 * False while the default connection, or the connection to a node that holds some of the channels and still owns
	 * their slots, is closed. A node that lost the slots of its channels (a failover) is forgotten for them: they are
	 * subscribed again on the new owner.
	 */
	@Override
	public boolean isTransportOpen() {
		StatefulRedisClusterPubSubConnection<byte[], byte[]> cluster = this.connection;
		if (cluster == null) {
			return true;
		}
		if (!cluster.isOpen()) {
			return false;
		}
		boolean open = true;
		for (Map.Entry<String, String> entry : this.nodeByChannel.entrySet()) {
			RedisClusterNode owner = cluster.getPartitions()
				.getPartitionBySlot(SlotHash.getSlot(entry.getKey().getBytes(StandardCharsets.UTF_8)));
			if (owner == null || !owner.getNodeId().equals(entry.getValue())) {
				this.nodeByChannel.remove(entry.getKey(), entry.getValue());
				continue;
			}
			try {
				open &= cluster.getConnection(entry.getValue()).isOpen();
			}
			catch (RuntimeException ex) {
				open = false;
			}
		}
		return open;
	}

	private StatefulRedisClusterPubSubConnection<byte[], byte[]> connection() {
		StatefulRedisClusterPubSubConnection<byte[], byte[]> current = this.connection;
		if (current != null) {
			return current;
		}
		StatefulRedisClusterPubSubConnection<byte[], byte[]> fresh = this.source.open(this.keepAliveChannel);
		try {
			fresh.setNodeMessagePropagation(true);
			fresh.addListener(this.listener);
			await(fresh.async().subscribe(this.keepAliveChannel).toCompletableFuture(), "SUBSCRIBE keep-alive");
		}
		catch (RuntimeException ex) {
			closeQuietly(fresh);
			throw ex;
		}
		this.confirmed = true;
		this.connection = fresh;
		return fresh;
	}

	@Override
	public void close() {
		StatefulRedisClusterPubSubConnection<byte[], byte[]> current = this.connection;
		this.connection = null;
		this.nodeByChannel.clear();
		if (current != null) {
			closeQuietly(current);
		}
	}

	private void closeQuietly(StatefulRedisClusterPubSubConnection<byte[], byte[]> connection) {
		try {
			this.source.close(connection);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not close the release subscription connection", ex);
		}
	}

	private static void await(java.util.concurrent.CompletableFuture<?> future, String what) {
		try {
			future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending " + what, ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw (cause instanceof RuntimeException runtime) ? translate(runtime)
					: new IllegalStateException(what + " failed", cause);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException(what + " got no answer within " + TIMEOUT_SECONDS + "s", ex);
		}
	}

	/** Lettuce's exception as Spring's, as the engine's commands throw it; the original stays the cause. */
	private static RuntimeException translate(RuntimeException ex) {
		if (ex instanceof DataAccessException) {
			return ex;
		}
		DataAccessException translated = EXCEPTION_CONVERTER.convert(ex);
		return (translated != null) ? translated : ex;
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	/** Messages and confirmations from every node's connection. */
	private final class Listener extends RedisClusterPubSubAdapter<byte[], byte[]> {

		@Override
		public void smessage(RedisClusterNode node, byte[] channel, byte[] message) {
			ShardedSubscriptionConnection.this.events.message(text(channel), text(message));
		}

		@Override
		public void ssubscribed(RedisClusterNode node, byte[] channel, long count) {
			ShardedSubscriptionConnection.this.events.subscribed(text(channel));
		}

		@Override
		public void message(RedisClusterNode node, byte[] channel, byte[] message) {
			ShardedSubscriptionConnection.this.events.message(text(channel), text(message));
		}

		@Override
		public void subscribed(RedisClusterNode node, byte[] channel, long count) {
			if (!Arrays.equals(channel, ShardedSubscriptionConnection.this.keepAliveChannel)) {
				ShardedSubscriptionConnection.this.events.subscribed(text(channel)); // a classic one (Redis 6.2)
			}
			else if (ShardedSubscriptionConnection.this.confirmed) {
				ShardedSubscriptionConnection.this.events.resubscribed(); // the client subscribed anew after a reconnect
			}
		}

	}

	/** The cluster client of Lettuce's own factory. */
	private record ClientSource(LettuceConnectionFactory connectionFactory) implements Source {

		@Override
		public StatefulRedisClusterPubSubConnection<byte[], byte[]> open(byte[] keepAliveChannel) {
			RedisClusterClient client = (RedisClusterClient) this.connectionFactory.getRequiredNativeClient();
			return client.connectPubSub(ByteArrayCodec.INSTANCE);
		}

		@Override
		public void close(StatefulRedisClusterPubSubConnection<byte[], byte[]> connection) {
			connection.close();
		}

	}

	/**
	 * A factory's connection that subscribed: while subscribed, Spring's Lettuce connection hands out the commands of
	 * its pub/sub connection as its native connection, which on a Cluster is Lettuce's cluster pub/sub connection (with
	 * byte array keys and values, as Spring opens it). Closing the Spring connection ends its subscription and closes
	 * the pub/sub connection. Spring's listener on it is given nothing to do: the engine adds its own.
	 */
	private static final class ConnectionSource implements Source {

		private final RedisConnectionFactory connectionFactory;

		/** The Spring connection of each open pub/sub connection. */
		private final Map<StatefulRedisClusterPubSubConnection<byte[], byte[]>, RedisConnection> opened = new ConcurrentHashMap<>();

		ConnectionSource(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = connectionFactory;
		}

		@Override
		@SuppressWarnings("unchecked")
		public StatefulRedisClusterPubSubConnection<byte[], byte[]> open(byte[] keepAliveChannel) {
			RedisConnection connection = this.connectionFactory.getConnection();
			try {
				connection.subscribe((message, pattern) -> {
				}, keepAliveChannel);
				Object nativeConnection = connection.getNativeConnection();
				if (!(nativeConnection instanceof RedisClusterPubSubAsyncCommands<?, ?> pubSub)) {
					throw new IllegalStateException("A subscribed connection of " + this.connectionFactory
							+ " gives no Lettuce cluster pub/sub connection but " + nativeConnection);
				}
				StatefulRedisClusterPubSubConnection<byte[], byte[]> cluster = (StatefulRedisClusterPubSubConnection<byte[], byte[]>) pubSub
					.getStatefulConnection();
				this.opened.put(cluster, connection);
				return cluster;
			}
			catch (RuntimeException ex) {
				connection.close();
				throw ex;
			}
		}

		@Override
		public void close(StatefulRedisClusterPubSubConnection<byte[], byte[]> connection) {
			RedisConnection owner = this.opened.remove(connection);
			if (owner != null) {
				owner.close();
			}
			else {
				connection.close();
			}
		}

	}

}
