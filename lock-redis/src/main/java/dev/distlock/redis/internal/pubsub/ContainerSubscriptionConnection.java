package dev.distlock.redis.internal.pubsub;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The pub/sub connection role on Spring Data's {@link RedisMessageListenerContainer}: the container owns the
 * connection, subscribes again after its recovery, and tells subscription confirmations to listeners that are
 * {@link SubscriptionListener}s. Messages and confirmations are dispatched on the client's thread (a direct task
 * executor), in order, as with {@link SubscriptionConnection}; a blocking client's (Jedis's) subscription runs on a
 * thread of the engine's.
 * <p>
 * What it cannot tell: whether the transport is down (the container does not say), so {@link #isTransportOpen()} is
 * always true and waiters learn of a lost connection only when the keep-alive channel is confirmed again; and the
 * container's {@code addMessageListener} waits for the channel's confirmation without a deadline, on the subscriber's
 * commands thread.
 */
public final class ContainerSubscriptionConnection implements PubSubConnection, MessageListener, SubscriptionListener {

	private static final Log logger = LogFactory.getLog(PubSubSupport.LOG_CATEGORY);

	private static final long CONNECT_TIMEOUT_SECONDS = 10;

	private final RedisConnectionFactory connectionFactory;

	private final byte[] keepAliveChannel;

	private final ChannelTopic keepAliveTopic;

	private final SubscriptionConnection.Events events;

	private final PubSubThreads threads;

	private final String threadName;

	/** Confined to the commands thread. */
	private @Nullable RedisMessageListenerContainer container;

	private volatile CompletableFuture<Void> connected = new CompletableFuture<>();

	/** The application's settings of the container (Boot's {@code spring.data.redis.listener.*}), applied first. */
	private final Consumer<RedisMessageListenerContainer> customizer;

	public ContainerSubscriptionConnection(RedisConnectionFactory connectionFactory, String keepAliveChannel,
			SubscriptionConnection.Events events, PubSubThreads threads, String threadName,
			Consumer<RedisMessageListenerContainer> customizer) {
		this.customizer = customizer;
		this.connectionFactory = connectionFactory;
		this.keepAliveChannel = keepAliveChannel.getBytes(StandardCharsets.UTF_8);
		this.keepAliveTopic = new ChannelTopic(keepAliveChannel);
		this.events = events;
		this.threads = threads;
		this.threadName = threadName;
	}

	@Override
	public void connectQuietly() {
		try {
			container();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not open the release subscription connection yet", ex);
		}
	}

	@Override
	public void subscribe(byte[] channel) {
		container().addMessageListener(this, new ChannelTopic(new String(channel, StandardCharsets.UTF_8)));
	}

	@Override
	public void unsubscribe(byte[][] channels) {
		RedisMessageListenerContainer current = this.container;
		if (current == null) {
			return;
		}
		for (byte[] channel : channels) {
			try {
				current.removeMessageListener(this, new ChannelTopic(new String(channel, StandardCharsets.UTF_8)));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not unsubscribe an idle release channel", ex);
			}
		}
	}

	@Override
	public boolean isTransportOpen() {
		return true;
	}

	private RedisMessageListenerContainer container() {
		RedisMessageListenerContainer current = this.container;
		if (current != null) {
			return current;
		}
		CompletableFuture<Void> ready = new CompletableFuture<>();
		this.connected = ready;
		RedisMessageListenerContainer fresh = new RedisMessageListenerContainer();
		// the application's recovery back-off and subscription registration timeout; what the engine relies on
		// (its connection factory, executors, error handling) is set after it
		this.customizer.accept(fresh);
		fresh.setConnectionFactory(this.connectionFactory);
		fresh.setTaskExecutor(Runnable::run);
		fresh.setSubscriptionExecutor((task) -> this.threads.newThread(this.threadName, task).start());
		fresh.setBeanName(this.threadName);
		// the subscriber logs (rate-limited) what it cannot subscribe, and subscribes again; the container would log a
		// stack trace per failure
		fresh.setErrorHandler((ex) -> logger.debug("Release subscription container failure", ex));
		fresh.addMessageListener(this, this.keepAliveTopic);
		fresh.afterPropertiesSet();
		fresh.start();
		try {
			ready.get(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			destroyQuietly(fresh);
			throw new IllegalStateException("Interrupted while connecting for release messages", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			destroyQuietly(fresh);
			throw new IllegalStateException("Could not subscribe for release messages", ex);
		}
		this.container = fresh;
		return fresh;
	}

	@Override
	public void close() {
		RedisMessageListenerContainer current = this.container;
		this.container = null;
		if (current != null) {
			destroyQuietly(current);
		}
	}

	private static void destroyQuietly(RedisMessageListenerContainer container) {
		try {
			container.destroy();
		}
		catch (Exception ex) {
			logger.debug("Could not close the release subscription container", ex);
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
				this.events.resubscribed(); // confirmed again: the container or client subscribed anew
			}
			return;
		}
		this.events.subscribed(new String(channel, StandardCharsets.UTF_8));
	}

}
