package dev.distlock.redis.internal.wait;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.pubsub.ContainerSubscriptionConnection;
import dev.distlock.redis.internal.pubsub.PubSubConnection;
import dev.distlock.redis.internal.pubsub.PubSubThreads;
import dev.distlock.redis.internal.pubsub.ShardedSubscriptions;
import dev.distlock.redis.internal.pubsub.SubscriptionConnection;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.store.ReleaseTopology;
import dev.distlock.redis.internal.support.EngineThreads;
import dev.distlock.redis.internal.wait.ReleaseChannel.ChannelState;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The upkeep of the release channels' subscriptions on the connection, for {@link ReleaseSubscriber}: subscribe a
 * channel that has waiters, confirm it, send it again while unconfirmed, mark every channel unconfirmed when the
 * transport was lost or the connection replaced, and unsubscribe channels idle for {@link #idleNanos}. The waiters
 * themselves are {@link ReleaseSubscriber}'s; this class only sees them to wake them when their channel can no longer
 * be trusted to tell of a release.
 * <p>
 * All subscribe and unsubscribe commands run on one thread, the commands thread, in order, so the confirmations Redis
 * sends back arrive in the order of the state changes below. Waiters never wait for that thread; they wait for a
 * future, up to their own deadline, and poll while their channel is not confirmed (see the fault model in
 * docs/architecture.md).
 */
final class ChannelSubscriptions implements AutoCloseable {

	/** The subscriber's log category, as before the upkeep became a class of its own. */
	private static final Log logger = LogFactory.getLog("dev.distlock.redis.ReleaseSubscriber");

	/** How often the connection and the channels that wait for a confirmation are looked after. */
	private static final long HEAL_MILLIS = 100;

	/** How long a subscription is waited for before it is sent again; doubled per failure up to the maximum. */
	static final long MIN_RESUBSCRIBE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final long MAX_RESUBSCRIBE_NANOS = TimeUnit.SECONDS.toNanos(8);

	private static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final PubSubConnection connection;

	private final long idleNanos;

	/** {@link ReleaseSubscriber}'s channels. */
	private final ConcurrentHashMap<String, ReleaseChannel> channels;

	private final ScheduledExecutorService commands;

	private volatile boolean closed;

	/** Confined to the commands thread: the connection's transport was seen closed and not yet open again. */
	private boolean transportLost;

	private volatile long lastWarnNanos;

	private final NotificationRefusals refusals;

	ChannelSubscriptions(ConcurrentHashMap<String, ReleaseChannel> channels, SubscriptionConnection.Events events,
			RedisConnectionFactory connectionFactory, String keepAliveChannel, long idleNanos, EngineThreads threads,
			String threadName, boolean listenerContainer, Consumer<RedisMessageListenerContainer> containerCustomizer,
			NotificationRefusals refusals) {
		this.channels = channels;
		this.refusals = refusals;
		// on a Redis Cluster, whatever the client, each release channel on its key's shard (SSUBSCRIBE), as the scripts
		// announce releases there (SPUBLISH); elsewhere Spring Data's listener container, or the engine's own connection
		// (always for a wrapped factory, whose client the container cannot tell: see ReleaseTopology)
		PubSubThreads connectionThreads = threads::newThread;
		this.connection = ReleaseTopology.isCluster(connectionFactory)
				? ShardedSubscriptions.of(connectionFactory, keepAliveChannel, events, connectionThreads,
						threadName + "-connection")
				: (listenerContainer && ReleaseTopology.isClientsOwnFactory(connectionFactory))
						? new ContainerSubscriptionConnection(connectionFactory, keepAliveChannel, events,
								connectionThreads, threadName + "-connection", containerCustomizer)
						: new SubscriptionConnection(connectionFactory, keepAliveChannel, events, connectionThreads,
								threadName + "-connection");
		this.idleNanos = idleNanos;
		this.commands = Executors.newSingleThreadScheduledExecutor(threads.named(threadName));
	}

	/**
	 * Start the upkeep and open the connection. Called once the subscriber that receives the connection's events is
	 * fully built, as the connection's first events may follow at once.
	 */
	void start() {
		long sweepMillis = Math.max(10, TimeUnit.NANOSECONDS.toMillis(this.idleNanos) / 2);
		this.commands.scheduleWithFixedDelay(this::unsubscribeIdle, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
		this.commands.scheduleWithFixedDelay(this::heal, HEAL_MILLIS, HEAL_MILLIS, TimeUnit.MILLISECONDS);
		// The first waiter of a fresh process would otherwise open the connection and wait for it.
		this.commands.execute(this.connection::connectQuietly);
	}

	/** Subscribe {@code ch}, which its first waiter just turned SUBSCRIBING, on the commands thread. */
	void subscribeLater(ReleaseChannel ch) {
		this.commands.execute(() -> subscribe(ch));
	}

	/** Redis confirmed the subscription of {@code channel}: its waiters may rely on its messages from now on. */
	void confirmed(String channel) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch == null) {
			return;
		}
		CompletableFuture<Void> subscribed;
		synchronized (ch) {
			if (ch.state == ChannelState.SUBSCRIBED) {
				// a reconnect's subscription: releases published while the client reconnected are lost, so every
				// waiter tries once more now rather than at its holder's lease time
				ch.waiters.forEach(Waiter::signal);
				return;
			}
			if (ch.state != ChannelState.SUBSCRIBING) {
				return;
			}
			ch.state = ChannelState.SUBSCRIBED;
			ch.resubscribeNanos = MIN_RESUBSCRIBE_NANOS;
			subscribed = ch.subscribed;
		}
		subscribed.complete(null);
	}

	// commands thread

	private void subscribe(ReleaseChannel ch) {
		synchronized (ch) {
			if (ch.state != ChannelState.SUBSCRIBING) {
				return;
			}
			ch.subscribeSentNanos = System.nanoTime();
		}
		try {
			this.connection.subscribe(ch.raw);
		}
		catch (RuntimeException ex) {
			// The channel stays SUBSCRIBING: heal() sends it again, later each time, while it has waiters, and they
			// poll meanwhile. The connection stays too: other channels may be subscribed on it.
			synchronized (ch) {
				ch.resubscribeNanos = Math.min(MAX_RESUBSCRIBE_NANOS, ch.resubscribeNanos * 2);
			}
			if (RedisFailures.isDenial(ex)) {
				this.refusals.subscribeRefused(ch.name, ex); // an operator must grant the channel: WARN and count
			}
			else {
				warn("Could not subscribe to " + ch.name + "; its waiters poll until it is subscribed", ex);
			}
		}
	}

	/**
	 * The connection's upkeep, every {@value #HEAL_MILLIS} ms on the commands thread. A connection that lost its
	 * transport (a restart, a failover) may miss release messages until the client has reconnected and subscribed
	 * again: its channels are marked unconfirmed and their waiters woken, so that they try at once and poll until the
	 * client's new subscriptions are confirmed. Channels still unconfirmed after a while are subscribed again, with
	 * growing intervals, for as long as they have waiters.
	 */
	private void heal() {
		try {
			boolean open = this.connection.isTransportOpen();
			if (!open && !this.transportLost) {
				this.transportLost = true;
				unconfirmAll();
			}
			else if (open) {
				this.transportLost = false;
			}
			long now = System.nanoTime();
			for (ReleaseChannel ch : this.channels.values()) {
				boolean resend;
				synchronized (ch) {
					resend = ch.state == ChannelState.SUBSCRIBING && !ch.waiters.isEmpty()
							&& now - ch.subscribeSentNanos - ch.resubscribeNanos >= 0;
				}
				if (resend && open) {
					subscribe(ch);
				}
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Release subscription upkeep failed", ex);
		}
	}

	/** Every subscribed channel must be confirmed again; its waiters try now and poll until then. */
	private void unconfirmAll() {
		for (ReleaseChannel ch : this.channels.values()) {
			synchronized (ch) {
				if (ch.state == ChannelState.SUBSCRIBED) {
					ch.state = ChannelState.SUBSCRIBING;
					ch.subscribed = new CompletableFuture<>();
					ch.subscribeSentNanos = System.nanoTime();
					ch.resubscribeNanos = MIN_RESUBSCRIBE_NANOS;
					for (Waiter waiter : ch.waiters) {
						waiter.signal();
					}
				}
			}
		}
	}

	private void warn(String message, Exception ex) {
		long now = System.nanoTime();
		if (now - this.lastWarnNanos > WARN_INTERVAL_NANOS) {
			this.lastWarnNanos = now;
			// the channel's name holds a lock key
			logger.warn(LogSafe.escape(message + ": " + ex));
		}
		else {
			logger.debug(LogSafe.escape(message), ex);
		}
	}

	private void unsubscribeIdle() {
		long now = System.nanoTime();
		List<byte[]> idle = new ArrayList<>();
		for (ReleaseChannel ch : this.channels.values()) {
			synchronized (ch) {
				boolean live = ch.state != ChannelState.DEAD;
				if (ch.waiters.isEmpty() && live && now - ch.idleSinceNanos >= this.idleNanos) {
					if (ch.state != ChannelState.NEW) { // a subscription still unconfirmed may be confirmed yet
						idle.add(ch.raw);
					}
					ch.state = ChannelState.DEAD;
					this.channels.remove(ch.name, ch);
				}
			}
		}
		this.connection.unsubscribe(idle.toArray(new byte[0][]));
	}

	/** A new connection replaced a closed one: every channel must be subscribed again on it. */
	void replaced() {
		for (ReleaseChannel ch : this.channels.values()) {
			CompletableFuture<Void> failed = null;
			synchronized (ch) {
				if (ch.state == ChannelState.SUBSCRIBED) {
					ch.state = ch.waiters.isEmpty() ? ChannelState.NEW : ChannelState.SUBSCRIBING;
					failed = ch.subscribed;
					ch.subscribed = new CompletableFuture<>();
					if (ch.state == ChannelState.SUBSCRIBING && !this.closed) {
						this.commands.execute(() -> subscribe(ch));
					}
				}
			}
			if (failed != null && !failed.isDone()) {
				failed.completeExceptionally(new IllegalStateException("Release subscription connection was closed"));
			}
		}
	}

	@Override
	public void close() {
		this.closed = true;
		this.commands.execute(this.connection::close);
		this.commands.shutdown();
		try {
			if (!this.commands.awaitTermination(5, TimeUnit.SECONDS)) {
				this.commands.shutdownNow();
			}
		}
		catch (InterruptedException ex) {
			this.commands.shutdownNow();
			Thread.currentThread().interrupt();
		}
	}

}
