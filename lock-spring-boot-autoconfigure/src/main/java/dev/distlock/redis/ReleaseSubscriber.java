package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The waiter bookkeeping of release messages: which threads of this process wait on which release channel, whom a
 * message or a local release wakes, which waiter a holder may hand its lease to, and which channels to subscribe or
 * drop. The connection itself is {@link SubscriptionConnection}'s; one waiting thread is a {@link Waiter}.
 * <p>
 * A waiter {@linkplain #register registers} for its lock's release channel <em>before</em> its next attempt and waits
 * for the subscription to be confirmed, so a release after that attempt cannot go unnoticed. Each release message (or
 * a release by a holder in this process) wakes one waiter of the channel, the longest waiting one that is not already
 * awake: the others would only lose the race to it. A release by a holder in this process wakes its waiter directly,
 * and the message of that release is then ignored here (its wake-up was given; any later attempt sees the lock as it
 * is). A waiter that leaves without acquiring passes its wake-up on.
 * Channels are subscribed while they have waiters and unsubscribed once idle for {@link #idleNanos}.
 * <p>
 * All subscribe and unsubscribe commands run on one thread, in order, so the confirmations Redis sends back arrive in
 * the order of the state changes below. Waiters never wait for that thread; they wait for a future, up to their own
 * deadline, and poll while their channel is not confirmed (see the fault model in docs/architecture.md).
 */
final class ReleaseSubscriber implements SubscriptionConnection.Events, AutoCloseable {

	private static final Log logger = LogFactory.getLog(ReleaseSubscriber.class);

	private static final int MAX_OWN_RELEASES = 16;

	/** How often the connection and the channels that wait for a confirmation are looked after. */
	private static final long HEAL_MILLIS = 100;

	/** How long a subscription is waited for before it is sent again; doubled per failure up to the maximum. */
	private static final long MIN_RESUBSCRIBE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final long MAX_RESUBSCRIBE_NANOS = TimeUnit.SECONDS.toNanos(8);

	private static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final PubSubConnection connection;

	private final long idleNanos;

	private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();

	private final ScheduledExecutorService commands;

	private volatile boolean closed;

	/** Confined to the commands thread: the connection's transport was seen closed and not yet open again. */
	private boolean transportLost;

	private volatile long lastWarnNanos;

	private final NotificationRefusals refusals;

	ReleaseSubscriber(RedisConnectionFactory connectionFactory, String keepAliveChannel, long idleNanos,
			EngineThreads threads, String threadName, boolean listenerContainer,
			Consumer<RedisMessageListenerContainer> containerCustomizer, NotificationRefusals refusals) {
		this.refusals = refusals;
		// on a Redis Cluster through Lettuce, each release channel on its key's shard (SSUBSCRIBE), as the scripts
		// announce releases there (SPUBLISH); elsewhere Spring Data's listener container, or the engine's own connection
		this.connection = LeaseStore.isSharded(connectionFactory)
				? ShardedSubscriptionConnection.of(connectionFactory, keepAliveChannel, this)
				: listenerContainer
						? new ContainerSubscriptionConnection(connectionFactory, keepAliveChannel, this, threads,
								threadName + "-connection", containerCustomizer)
						: new SubscriptionConnection(connectionFactory, keepAliveChannel, this, threads,
								threadName + "-connection");
		this.idleNanos = idleNanos;
		this.commands = Executors.newSingleThreadScheduledExecutor(threads.named(threadName));
		long sweepMillis = Math.max(10, TimeUnit.NANOSECONDS.toMillis(idleNanos) / 2);
		this.commands.scheduleWithFixedDelay(this::unsubscribeIdle, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
		this.commands.scheduleWithFixedDelay(this::heal, HEAL_MILLIS, HEAL_MILLIS, TimeUnit.MILLISECONDS);
		// The first waiter of a fresh process would otherwise open the connection and wait for it.
		this.commands.execute(this.connection::connectQuietly);
	}

	/**
	 * Start waiting on {@code channel} as {@code owner}, who asks for a lease of {@code ttlMillis} (what a holder in
	 * this process needs to hand its lease over) for the lock named {@code name} (for the gauges); the caller must
	 * {@link #unregister} the waiter in a finally block.
	 */
	Waiter register(String channel, String owner, String name, long ttlMillis) {
		for (;;) {
			Channel ch = this.channels.computeIfAbsent(channel, Channel::new);
			synchronized (ch) {
				if (ch.state == ChannelState.DEAD) {
					continue;
				}
				Waiter waiter = new Waiter(ch, Thread.currentThread(), ch.subscribed, owner, name, ttlMillis);
				ch.waiters.addLast(waiter);
				if (ch.state == ChannelState.NEW) {
					ch.state = ChannelState.SUBSCRIBING;
					this.commands.execute(() -> subscribe(ch));
				}
				return waiter;
			}
		}
	}

	/**
	 * Reserve the longest waiting waiter of {@code channel} that is between attempts, for a hand-over of the lease
	 * {@code owner} holds; null if there is none. The caller must {@link Waiter#grant grant} or
	 * {@link Waiter#revert revert} the reservation.
	 */
	@Nullable Waiter reserveForHandOver(String channel, String owner) {
		Channel ch = this.channels.get(channel);
		if (ch == null) {
			return null;
		}
		synchronized (ch) {
			for (Waiter waiter : ch.waiters) {
				if (!waiter.owner.equals(owner) && waiter.reserve()) {
					return waiter;
				}
			}
		}
		return null;
	}

	/**
	 * This process released the lock while other processes waited for it: its own threads hold back their attempts
	 * until {@code untilNanos}, so that the waiters the release woke elsewhere get the lock rather than losing it to a
	 * thread here that simply asks again at once.
	 */
	void yieldUntil(String channel, long untilNanos) {
		for (;;) {
			Channel ch = this.channels.computeIfAbsent(channel, Channel::new);
			synchronized (ch) {
				if (ch.state == ChannelState.DEAD) {
					continue;
				}
				ch.yieldUntilNanos = untilNanos;
				ch.idleSinceNanos = System.nanoTime();
				return;
			}
		}
	}

	/**
	 * Whether {@code channel} is subscribed now: a thread that registers as a waiter first hears of every later
	 * release, so it may make its first attempt as a registered waiter.
	 */
	boolean isSubscribed(String channel) {
		Channel ch = this.channels.get(channel);
		if (ch == null) {
			return false;
		}
		synchronized (ch) {
			return ch.state == ChannelState.SUBSCRIBED;
		}
	}

	/** Until when this process's threads hold back their attempts on {@code channel}; 0 when they need not. */
	long yieldingUntil(String channel) {
		Channel ch = this.channels.get(channel);
		if (ch == null) {
			return 0;
		}
		synchronized (ch) {
			long until = ch.yieldUntilNanos;
			return (until != 0 && until - System.nanoTime() > 0) ? until : 0;
		}
	}

	/** Stop waiting; a wake-up the waiter did not use (it did not acquire) goes to the next waiter. */
	void unregister(Waiter waiter, boolean acquired) {
		Channel ch = waiter.channel;
		synchronized (ch) {
			ch.waiters.remove(waiter);
			if (waiter.signalled && !acquired) {
				wakeOne(ch);
			}
			if (ch.waiters.isEmpty()) {
				ch.idleSinceNanos = System.nanoTime();
			}
		}
	}

	/**
	 * The lock was freed from this process other than by its holder's release (a forced release, whose message does not
	 * carry a token this process knows): wake a local waiter without waiting for the message.
	 */
	void releasedLocally(String channel) {
		Channel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				wakeOne(ch);
			}
		}
	}

	/**
	 * A holder in this process released the lease with {@code token}: wake a local waiter without waiting for the
	 * message, and ignore the message when it comes, as its wake-up has been given. Waking a second local waiter on
	 * it would only send one more attempt that loses to the first (or to the releasing thread itself).
	 */
	void releasedLocally(String channel, long token) {
		Channel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				if (wakeOne(ch)) {
					ch.expectOwnMessage(Long.toString(token));
				}
			}
		}
	}

	/** Waiters currently registered, over all channels. */
	int waiterCount() {
		int count = 0;
		for (Channel ch : this.channels.values()) {
			synchronized (ch) {
				count += ch.waiters.size();
			}
		}
		return count;
	}

	/** Waiters currently registered, by lock name; names without waiters are absent. */
	Map<String, Integer> waiterCountsByName() {
		Map<String, Integer> counts = new HashMap<>();
		for (Channel ch : this.channels.values()) {
			synchronized (ch) {
				for (Waiter waiter : ch.waiters) {
					counts.merge(waiter.name, 1, Integer::sum);
				}
			}
		}
		return counts;
	}

	/** Wake the longest waiting waiter that is not awake already; returns whether there was one. */
	private static boolean wakeOne(Channel ch) {
		for (Waiter waiter : ch.waiters) {
			if (!waiter.signalled) {
				waiter.signal();
				return true;
			}
		}
		return false;
	}

	/** A release message: its body is the released lease's token. Wakes one waiter, unless this process released it. */
	@Override
	public void message(String channel, String body) {
		Channel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				if (!ch.ownMessageArrived(body)) {
					wakeOne(ch);
				}
			}
		}
	}

	@Override
	public void resubscribed() {
		// releases published while the client reconnected are lost: every waiter tries once more now rather than at
		// its holder's lease time
		wakeAll();
	}

	@Override
	public void subscribed(String channel) {
		Channel ch = this.channels.get(channel);
		if (ch == null) {
			return;
		}
		CompletableFuture<Void> subscribed;
		synchronized (ch) {
			if (ch.state == ChannelState.SUBSCRIBED) {
				ch.waiters.forEach(Waiter::signal); // a reconnect's subscription: see above
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

	private void subscribe(Channel ch) {
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
			for (Channel ch : this.channels.values()) {
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

	private void wakeAll() {
		for (Channel ch : this.channels.values()) {
			synchronized (ch) {
				ch.waiters.forEach(Waiter::signal);
			}
		}
	}

	/** Every subscribed channel must be confirmed again; its waiters try now and poll until then. */
	private void unconfirmAll() {
		for (Channel ch : this.channels.values()) {
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
			logger.warn(message + ": " + ex);
		}
		else {
			logger.debug(message, ex);
		}
	}

	private void unsubscribeIdle() {
		long now = System.nanoTime();
		List<byte[]> idle = new ArrayList<>();
		for (Channel ch : this.channels.values()) {
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
	@Override
	public void replaced() {
		for (Channel ch : this.channels.values()) {
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

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	private enum ChannelState {
		NEW, SUBSCRIBING, SUBSCRIBED, DEAD
	}

	/** One release channel and its local waiters; all mutable state guarded by {@code this}. */
	static final class Channel {

		final String name;

		final byte[] raw;

		final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

		ChannelState state = ChannelState.NEW;

		CompletableFuture<Void> subscribed = new CompletableFuture<>();

		long idleSinceNanos = System.nanoTime();

		/** When the last SUBSCRIBE for this channel was sent. */
		long subscribeSentNanos;

		/** How long after {@link #subscribeSentNanos} an unconfirmed subscription is sent again. */
		long resubscribeNanos = MIN_RESUBSCRIBE_NANOS;

		/** See {@link ReleaseSubscriber#yieldUntil}; 0 when not yielding. */
		long yieldUntilNanos;

		/**
		 * Tokens of leases this process released on this channel whose message has not come yet (its wake-up was given
		 * directly). Bounded: the message of a release can come before the releasing thread records it, or never (a
		 * dropped subscription), and then its token stays until pushed out.
		 */
		private final ArrayDeque<String> ownReleases = new ArrayDeque<>(4);

		Channel(String name) {
			this.name = name;
			this.raw = bytes(name);
		}

		void expectOwnMessage(String token) {
			if (this.ownReleases.size() == MAX_OWN_RELEASES) {
				this.ownReleases.removeFirst();
			}
			this.ownReleases.addLast(token);
		}

		/** Whether the message with this token is the message of a release by this process (and forget it). */
		boolean ownMessageArrived(String token) {
			return this.ownReleases.remove(token);
		}

	}

}
