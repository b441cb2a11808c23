package dev.distlock.redis.internal.pubsub;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.BinaryJedisPubSub;
import redis.clients.jedis.BinaryJedisShardedPubSub;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The pub/sub connection role on a Redis Cluster through Jedis, with sharded pub/sub as Lettuce's
 * {@link ShardedSubscriptionConnection} does it, so that Jedis and Lettuce services that share locks hear each other's
 * releases: each release channel is subscribed with {@code SSUBSCRIBE} on the master that owns its slot, where the
 * release scripts {@code SPUBLISH}. Jedis's subscriptions block a thread that reads the connection, so there is one
 * {@link Reader} per master that has channels, on a connection borrowed from the cluster client's pool for that
 * master; a master's further channels are sent on the reader's connection, and its last channel's unsubscription ends
 * the reader.
 * <p>
 * Jedis neither reconnects nor subscribes again on its own, so there is no keep-alive channel to tell of a new
 * subscription: a reader that ends while it still has channels (its connection lost, the master dead, or Redis
 * unsubscribing channels whose slots moved to another master) makes {@link #isTransportOpen()} false once, so that
 * the subscriptions' upkeep ({@code dev.distlock.redis.ChannelSubscriptions}) marks every channel unconfirmed, wakes
 * its waiters (who poll meanwhile) and subscribes them again, on whichever master then owns their slot (the client's
 * {@code getConnectionFromSlot} refreshes its view of the slots when the old owner cannot be reached). On Redis before
 * 7.0 ({@code SSUBSCRIBE} unknown) it subscribes classically on the slot's owner, as the scripts then {@code PUBLISH}
 * there.
 * <p>
 * Its methods are called on one thread (the subscriber's commands thread); the events come on the readers' threads.
 * Loaded only when Jedis is the client.
 */
final class JedisShardedSubscriptionConnection implements PubSubConnection {

	private static final Log logger = LogFactory.getLog(PubSubSupport.LOG_CATEGORY);

	private static final long TIMEOUT_SECONDS = 10;

	/** How long {@link #close()} lets a reader end on its own before it closes its connection under it. */
	private static final long CLOSE_WAIT_MILLIS = 1000;

	/** A connection, from Jedis's pool, to the master that owns a slot. */
	private final IntFunction<Connection> connectionFromSlot;

	private final SubscriptionConnection.Events events;

	private final PubSubThreads threads;

	private final String threadName;

	/** The reader of each master that has channels, by node id. Confined to the commands thread. */
	private final Map<String, Reader> readers = new HashMap<>();

	/** Set by a reader that ended while it still had channels; read (and cleared) by {@link #isTransportOpen()}. */
	private final AtomicBoolean lost = new AtomicBoolean();

	/** Set once a master answered SSUBSCRIBE as an unknown command (Redis before 7.0): classic SUBSCRIBE on the owner. */
	private volatile boolean classic;

	private JedisShardedSubscriptionConnection(IntFunction<Connection> connectionFromSlot,
			SubscriptionConnection.Events events, PubSubThreads threads, String threadName) {
		this.connectionFromSlot = connectionFromSlot;
		this.events = events;
		this.threads = threads;
		this.threadName = threadName;
	}

	/**
	 * The connection for a Jedis cluster client ({@link JedisClusterSlots#isJedisCluster}); a signature without Jedis
	 * types.
	 */
	static PubSubConnection of(Object jedisCluster, SubscriptionConnection.Events events, PubSubThreads threads,
			String threadName) {
		return new JedisShardedSubscriptionConnection(JedisClusterSlots.connectionFromSlot(jedisCluster), events,
				threads, threadName);
	}

	/** Nothing to open ahead: a master's reader starts with its first channel. */
	@Override
	public void connectQuietly() {
	}

	@Override
	public void subscribe(byte[] channel) {
		reapEnded();
		String name = text(channel);
		Connection connection = this.connectionFromSlot.apply(JedisClusterCRC16.getSlot(channel));
		String nodeId;
		try {
			connection.sendCommand(Protocol.Command.CLUSTER, "MYID");
			nodeId = connection.getBulkReply();
		}
		catch (RuntimeException ex) {
			connection.close();
			throw ex;
		}
		Reader reader = this.readers.get(nodeId);
		if (reader != null && !reader.ended) {
			connection.close(); // back to the pool: the master's reader has a connection of its own
			reader.channels.add(name);
			try {
				reader.subscribe(channel);
			}
			catch (RuntimeException ex) {
				reader.channels.remove(name);
				throw ex;
			}
			return;
		}
		start(nodeId, connection, channel, name);
	}

	/** A reader for a master that has none, with its first channel; waits for that channel's confirmation. */
	private void start(String nodeId, Connection connection, byte[] channel, String name) {
		Reader reader = new Reader(nodeId, connection, this.classic);
		reader.channels.add(name);
		this.readers.put(nodeId, reader);
		this.threads.newThread(this.threadName + "-" + nodeId.substring(0, Math.min(8, nodeId.length())),
				() -> reader.run(channel)).start();
		try {
			reader.started.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			retire(reader);
			throw new IllegalStateException("Interrupted while subscribing " + name, ex);
		}
		catch (ExecutionException ex) {
			retire(reader);
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (!reader.classic && PubSubSupport.isUnknownCommand(cause)) {
				// Redis before 7.0: the scripts fall back to PUBLISH too, which reaches a subscriber on the key's
				// master without crossing the cluster bus
				this.classic = true;
				start(nodeId, this.connectionFromSlot.apply(JedisClusterCRC16.getSlot(channel)), channel, name);
				return;
			}
			throw (cause instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException("SSUBSCRIBE " + name + " failed", cause);
		}
		catch (TimeoutException ex) {
			retire(reader);
			throw new IllegalStateException("SSUBSCRIBE " + name + " got no answer within " + TIMEOUT_SECONDS + "s",
					ex);
		}
	}

	@Override
	public void unsubscribe(byte[][] channels) {
		for (byte[] channel : channels) {
			String name = text(channel);
			for (Iterator<Reader> it = this.readers.values().iterator(); it.hasNext();) {
				Reader reader = it.next();
				if (!reader.channels.remove(name)) {
					continue;
				}
				if (reader.channels.isEmpty()) {
					it.remove(); // its last channel: the reader ends once Redis confirms, and gives its connection up
				}
				try {
					reader.unsubscribe(channel);
				}
				catch (RuntimeException ex) {
					logger.debug("Could not unsubscribe an idle release channel", ex);
				}
				break;
			}
		}
	}

	/**
	 * False once after a reader ended while it still had channels (see the class comment), so that every channel is
	 * confirmed again; true otherwise.
	 */
	@Override
	public boolean isTransportOpen() {
		reapEnded();
		return !this.lost.getAndSet(false);
	}

	/** Forget the readers that ended; a reader that ended with channels left counts as a lost transport. */
	private void reapEnded() {
		for (Iterator<Reader> it = this.readers.values().iterator(); it.hasNext();) {
			Reader reader = it.next();
			if (reader.ended) {
				it.remove();
				if (!reader.channels.isEmpty()) {
					this.lost.set(true);
				}
			}
		}
	}

	private void retire(Reader reader) {
		this.readers.remove(reader.nodeId, reader);
		reader.channels.clear();
		reader.stop();
	}

	@Override
	public void close() {
		for (Reader reader : this.readers.values()) {
			reader.channels.clear();
			reader.stop();
		}
		this.readers.clear();
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	/**
	 * One master's subscriptions: a thread blocked reading the connection, which it gives up (as broken, so that the
	 * pool never hands out a connection in subscriber mode) when it ends.
	 */
	private final class Reader {

		final String nodeId;

		final Connection connection;

		final boolean classic;

		/** The channels this reader should hear; one Redis unsubscribed on its own counts as lost. */
		final Set<String> channels = ConcurrentHashMap.newKeySet();

		/** Completed at the first channel's confirmation, or with the failure that ended the reader before it. */
		final CompletableFuture<Void> started = new CompletableFuture<>();

		private final Sharded sharded = new Sharded();

		private final Plain plain = new Plain();

		private volatile @Nullable Thread thread;

		volatile boolean ended;

		Reader(String nodeId, Connection connection, boolean classic) {
			this.nodeId = nodeId;
			this.connection = connection;
			this.classic = classic;
		}

		void run(byte[] first) {
			this.thread = Thread.currentThread();
			try {
				if (this.classic) {
					this.plain.proceed(this.connection, first);
				}
				else {
					this.sharded.proceed(this.connection, first);
				}
				this.started.completeExceptionally(new IllegalStateException("Subscription ended before it began"));
			}
			catch (RuntimeException ex) {
				this.started.completeExceptionally(ex);
				if (!this.channels.isEmpty()) {
					logger.debug("Release subscription connection to node " + this.nodeId + " ended", ex);
				}
			}
			finally {
				this.ended = true;
				if (!this.channels.isEmpty()) {
					JedisShardedSubscriptionConnection.this.lost.set(true);
				}
				closeConnection();
			}
		}

		void subscribe(byte[] channel) {
			if (this.classic) {
				this.plain.subscribe(channel);
			}
			else {
				this.sharded.ssubscribe(channel);
			}
		}

		void unsubscribe(byte[] channel) {
			if (this.classic) {
				this.plain.unsubscribe(channel);
			}
			else {
				this.sharded.sunsubscribe(channel);
			}
		}

		/** End the reader: unsubscribe everything, and close its connection under it if it does not end soon. */
		void stop() {
			try {
				if (this.classic) {
					this.plain.unsubscribe();
				}
				else {
					this.sharded.sunsubscribe();
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Could not unsubscribe the release channels of node " + this.nodeId, ex);
			}
			Thread reading = this.thread;
			if (reading != null) {
				try {
					reading.join(CLOSE_WAIT_MILLIS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			if (!this.ended) {
				closeConnection();
			}
		}

		private void closeConnection() {
			try {
				this.connection.setBroken();
				this.connection.close();
			}
			catch (RuntimeException ex) {
				logger.debug("Could not close the release subscription connection to node " + this.nodeId, ex);
			}
		}

		private void confirmed(byte[] channel) {
			this.started.complete(null);
			JedisShardedSubscriptionConnection.this.events.subscribed(text(channel));
		}

		private void unsubscribed(byte[] channel) {
			if (this.channels.remove(text(channel))) {
				// Redis unsubscribed it on its own: its slot moved to another master (a failover, a resharding)
				JedisShardedSubscriptionConnection.this.lost.set(true);
			}
		}

		private final class Sharded extends BinaryJedisShardedPubSub {

			@Override
			public void onSMessage(byte[] channel, byte[] message) {
				JedisShardedSubscriptionConnection.this.events.message(text(channel), text(message));
			}

			@Override
			public void onSSubscribe(byte[] channel, int subscribedChannels) {
				confirmed(channel);
			}

			@Override
			public void onSUnsubscribe(byte[] channel, int subscribedChannels) {
				unsubscribed(channel);
			}

		}

		private final class Plain extends BinaryJedisPubSub {

			@Override
			public void onMessage(byte[] channel, byte[] message) {
				JedisShardedSubscriptionConnection.this.events.message(text(channel), text(message));
			}

			@Override
			public void onSubscribe(byte[] channel, int subscribedChannels) {
				confirmed(channel);
			}

			@Override
			public void onUnsubscribe(byte[] channel, int subscribedChannels) {
				unsubscribed(channel);
			}

		}

	}

}
