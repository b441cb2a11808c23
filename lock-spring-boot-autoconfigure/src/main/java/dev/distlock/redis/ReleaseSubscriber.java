package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.Subscription;
import org.springframework.data.redis.connection.SubscriptionListener;

/**
 * Wakes waiters when a lock they wait for is released, through one pub/sub connection per service.
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
 * deadline, and fall back to waking at the holder's remaining lease time if pub/sub is unavailable.
 */
final class ReleaseSubscriber implements MessageListener, SubscriptionListener, AutoCloseable {

	private static final Log logger = LogFactory.getLog(ReleaseSubscriber.class);

	private static final long CONNECT_TIMEOUT_SECONDS = 10;

	private static final int MAX_OWN_RELEASES = 16;

	private final RedisConnectionFactory connectionFactory;

	private final byte[] keepAliveChannel;

	private final long idleNanos;

	private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();

	private final ScheduledExecutorService commands;

	/** Confined to the commands thread. */
	private @Nullable RedisConnection connection;

	private volatile CompletableFuture<Void> connected = new CompletableFuture<>();

	ReleaseSubscriber(RedisConnectionFactory connectionFactory, String keepAliveChannel, long idleNanos, String threadName) {
		this.connectionFactory = connectionFactory;
		this.keepAliveChannel = bytes(keepAliveChannel);
		this.idleNanos = idleNanos;
		this.commands = Executors.newSingleThreadScheduledExecutor(runnable -> {
			Thread thread = new Thread(runnable, threadName);
			thread.setDaemon(true);
			return thread;
		});
		long sweepMillis = Math.max(10, TimeUnit.NANOSECONDS.toMillis(idleNanos) / 2);
		this.commands.scheduleWithFixedDelay(this::unsubscribeIdle, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
	}

	/** Start waiting on {@code channel}; the caller must {@link #unregister} the waiter in a finally block. */
	Waiter register(String channel) {
		for (;;) {
			Channel ch = this.channels.computeIfAbsent(channel, Channel::new);
			synchronized (ch) {
				if (ch.state == ChannelState.DEAD) {
					continue;
				}
				Waiter waiter = new Waiter(ch, Thread.currentThread(), ch.subscribed);
				ch.waiters.addLast(waiter);
				if (ch.state == ChannelState.NEW) {
					ch.state = ChannelState.SUBSCRIBING;
					this.commands.execute(() -> subscribe(ch));
				}
				return waiter;
			}
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
	public void onMessage(Message message, byte @Nullable [] pattern) {
		Channel ch = this.channels.get(new String(message.getChannel(), StandardCharsets.UTF_8));
		if (ch != null) {
			synchronized (ch) {
				if (!ch.ownMessageArrived(new String(message.getBody(), StandardCharsets.UTF_8))) {
					wakeOne(ch);
				}
			}
		}
	}

	@Override
	public void onChannelSubscribed(byte[] channel, long count) {
		if (java.util.Arrays.equals(channel, this.keepAliveChannel)) {
			this.connected.complete(null);
			return;
		}
		Channel ch = this.channels.get(new String(channel, StandardCharsets.UTF_8));
		if (ch == null) {
			return;
		}
		CompletableFuture<Void> subscribed;
		synchronized (ch) {
			if (ch.state != ChannelState.SUBSCRIBING) {
				return;
			}
			ch.state = ChannelState.SUBSCRIBED;
			subscribed = ch.subscribed;
		}
		subscribed.complete(null);
	}

	// commands thread

	private void subscribe(Channel ch) {
		try {
			subscription().subscribe(ch.raw);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not subscribe to " + ch.name + "; waiters fall back to the holder's lease time", ex);
			CompletableFuture<Void> failed;
			synchronized (ch) {
				failed = ch.subscribed;
				ch.subscribed = new CompletableFuture<>();
				ch.state = ChannelState.NEW;
			}
			failed.completeExceptionally(ex);
			dropConnection();
		}
	}

	private Subscription subscription() {
		RedisConnection current = this.connection;
		if (current != null && current.isSubscribed() && current.getSubscription() != null) {
			return current.getSubscription();
		}
		dropConnection();
		RedisConnection fresh = this.connectionFactory.getConnection();
		CompletableFuture<Void> ready = new CompletableFuture<>();
		this.connected = ready;
		// Some clients (Jedis) block the subscribing thread for the life of the subscription; Lettuce returns at once.
		Thread subscriber = new Thread(() -> {
			try {
				fresh.subscribe(this, this.keepAliveChannel);
			}
			catch (RuntimeException ex) {
				ready.completeExceptionally(ex);
			}
		}, Thread.currentThread().getName() + "-connection");
		subscriber.setDaemon(true);
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

	private void unsubscribeIdle() {
		long now = System.nanoTime();
		List<byte[]> idle = new ArrayList<>();
		for (Channel ch : this.channels.values()) {
			synchronized (ch) {
				boolean settled = ch.state == ChannelState.SUBSCRIBED || ch.state == ChannelState.NEW;
				if (ch.waiters.isEmpty() && settled && now - ch.idleSinceNanos >= this.idleNanos) {
					if (ch.state == ChannelState.SUBSCRIBED) {
						idle.add(ch.raw);
					}
					ch.state = ChannelState.DEAD;
					this.channels.remove(ch.name, ch);
				}
			}
		}
		RedisConnection current = this.connection;
		if (!idle.isEmpty() && current != null && current.isSubscribed() && current.getSubscription() != null) {
			try {
				current.getSubscription().unsubscribe(idle.toArray(new byte[0][]));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not unsubscribe idle release channels", ex);
				dropConnection();
			}
		}
	}

	private void dropConnection() {
		RedisConnection current = this.connection;
		this.connection = null;
		if (current != null) {
			closeQuietly(current);
		}
		// Every channel must be subscribed again on the next connection.
		for (Channel ch : this.channels.values()) {
			CompletableFuture<Void> failed = null;
			synchronized (ch) {
				if (ch.state == ChannelState.SUBSCRIBED) {
					ch.state = ch.waiters.isEmpty() ? ChannelState.NEW : ChannelState.SUBSCRIBING;
					failed = ch.subscribed;
					ch.subscribed = new CompletableFuture<>();
					if (ch.state == ChannelState.SUBSCRIBING) {
						this.commands.execute(() -> subscribe(ch));
					}
				}
			}
			if (failed != null && !failed.isDone()) {
				failed.completeExceptionally(new IllegalStateException("Release subscription connection was closed"));
			}
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
	public void close() {
		this.commands.execute(this::dropConnection);
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

	/** One thread waiting for one lock. */
	static final class Waiter {

		final Channel channel;

		private final Thread thread;

		private final CompletableFuture<Void> subscribed;

		volatile boolean signalled;

		Waiter(Channel channel, Thread thread, CompletableFuture<Void> subscribed) {
			this.channel = channel;
			this.thread = thread;
			this.subscribed = subscribed;
		}

		void signal() {
			this.signalled = true;
			LockSupport.unpark(this.thread);
		}

		/** Wait until the subscription is confirmed; false if it failed or the deadline passed first. */
		boolean awaitSubscribed(long deadlineNanos) throws InterruptedException {
			try {
				this.subscribed.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
				return true;
			}
			catch (ExecutionException | TimeoutException ex) {
				return false;
			}
		}

		/** Park until woken or {@code untilNanos}; true if woken by a release. Consumes the wake-up. */
		boolean await(long untilNanos) throws InterruptedException {
			while (!this.signalled) {
				long remaining = untilNanos - System.nanoTime();
				if (remaining <= 0) {
					return false;
				}
				LockSupport.parkNanos(this, remaining);
				if (Thread.interrupted()) {
					throw new InterruptedException();
				}
			}
			this.signalled = false;
			return true;
		}

	}

}
