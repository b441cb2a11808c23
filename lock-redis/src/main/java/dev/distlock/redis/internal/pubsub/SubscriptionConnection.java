package dev.distlock.redis.internal.pubsub;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.Subscription;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.util.ClassUtils;

/**
 * The one pub/sub connection of a service: it opens the connection (subscribed to a keep-alive channel, so that it
 * exists before the first waiter and tells when the client subscribed anew after a reconnect), subscribes and
 * unsubscribes release channels on it, tells whether its transport is up, and closes it. One role: the connection;
 * what the messages mean is the {@link Events}' business.
 * <p>
 * Its methods are called on one thread (the subscriber's commands thread); the events come on the client's threads.
 */
public final class SubscriptionConnection implements PubSubConnection, MessageListener, SubscriptionListener {

	/** What the connection hears. */
	public interface Events {

		/** A message on a release channel. */
		void message(String channel, String body);

		/** Redis confirmed a subscription to a release channel (again, after a reconnect). */
		void subscribed(String channel);

		/** The client subscribed anew after a reconnect: messages published meanwhile are lost. */
		void resubscribed();

		/** A new connection replaced one that was closed: every channel must be subscribed again. */
		void replaced();

	}

	private static final Log logger = LogFactory.getLog(PubSubSupport.LOG_CATEGORY);

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent(ClientNames.LETTUCE_TYPE,
			SubscriptionConnection.class.getClassLoader());

	private static final long CONNECT_TIMEOUT_SECONDS = 10;

	private final RedisConnectionFactory connectionFactory;

	private final byte[] keepAliveChannel;

	private final Events events;

	private final PubSubThreads threads;

	private final String threadName;

	private @Nullable RedisConnection connection;

	private volatile CompletableFuture<Void> connected = new CompletableFuture<>();

	public SubscriptionConnection(RedisConnectionFactory connectionFactory, String keepAliveChannel, Events events,
			PubSubThreads threads, String threadName) {
		this.threads = threads;
		this.threadName = threadName;
		this.connectionFactory = connectionFactory;
		this.keepAliveChannel = keepAliveChannel.getBytes(StandardCharsets.UTF_8);
		this.events = events;
	}

	/** Open the connection now if it is not open; failures are logged, and the next subscription tries again. */
	@Override
	public void connectQuietly() {
		try {
			subscription();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not open the release subscription connection yet", ex);
		}
	}

	/** Subscribe to {@code channel}, opening the connection if needed; the confirmation comes as an event. */
	@Override
	public void subscribe(byte[] channel) {
		subscription().subscribe(channel);
	}

	/**
	 * Unsubscribe from {@code channels}; a failure is harmless (their messages find no waiter) and keeps the
	 * connection, with the subscriptions the client re-establishes on its own after a reconnect.
	 */
	@Override
	public void unsubscribe(byte[][] channels) {
		RedisConnection current = this.connection;
		if (channels.length > 0 && current != null && current.isSubscribed() && current.getSubscription() != null) {
			try {
				current.getSubscription().unsubscribe(channels);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not unsubscribe idle release channels", ex);
			}
		}
	}

	/** False while the client's transport is down (it reconnects on its own); true when unknown or not open yet. */
	@Override
	public boolean isTransportOpen() {
		RedisConnection current = this.connection;
		return current == null || !LETTUCE_PRESENT || LettucePubSub.isOpen(current);
	}

	private Subscription subscription() {
		RedisConnection current = this.connection;
		if (current != null && current.isSubscribed() && current.getSubscription() != null) {
			return current.getSubscription();
		}
		if (current != null) {
			close();
			this.events.replaced();
		}
		RedisConnection fresh = this.connectionFactory.getConnection();
		CompletableFuture<Void> ready = new CompletableFuture<>();
		this.connected = ready;
		// Some clients (Jedis) block the subscribing thread for the life of the subscription; Lettuce returns at once.
		Thread subscriber = this.threads.newThread(this.threadName, () -> {
			try {
				fresh.subscribe(this, this.keepAliveChannel);
			}
			catch (RuntimeException ex) {
				ready.completeExceptionally(ex);
			}
		});
		subscriber.start();
		try {
			ready.get(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			closeQuietly(fresh);
			throw new IllegalStateException("Interrupted while connecting for release messages", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			closeQuietly(fresh);
			throw new IllegalStateException("Could not subscribe for release messages", ex);
		}
		this.connection = fresh;
		Subscription subscription = fresh.getSubscription();
		if (subscription == null) {
			throw new IllegalStateException("Connection has no subscription after subscribing");
		}
		return subscription;
	}

	/** Close the connection, if one is open. */
	@Override
	public void close() {
		RedisConnection current = this.connection;
		this.connection = null;
		if (current != null) {
			closeQuietly(current);
		}
	}

	private static void closeQuietly(RedisConnection connection) {
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not close the release subscription connection", ex);
		}
	}

	@Override
	public void onMessage(Message message, byte @Nullable [] pattern) {
		this.events.message(new String(message.getChannel(), StandardCharsets.UTF_8),
				new String(message.getBody(), StandardCharsets.UTF_8));
	}

	@Override
	public void onChannelSubscribed(byte[] channel, long count) {
		if (Arrays.equals(channel, this.keepAliveChannel)) {
			if (!this.connected.complete(null)) {
				this.events.resubscribed(); // confirmed again: the client reconnected and subscribed anew
			}
			return;
		}
		this.events.subscribed(new String(channel, StandardCharsets.UTF_8));
	}

}
