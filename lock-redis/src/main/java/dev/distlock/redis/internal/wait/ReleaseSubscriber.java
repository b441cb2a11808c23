package dev.distlock.redis.internal.wait;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

import dev.distlock.redis.internal.pubsub.SubscriptionConnection;
import dev.distlock.redis.internal.single.FairAcquisition;
import dev.distlock.redis.internal.support.EngineThreads;
import dev.distlock.redis.internal.wait.ReleaseChannel.ChannelState;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The waiter bookkeeping of release messages: which threads and asynchronous acquisitions of this process wait on which
 * release channel, whom a message or a local release wakes, which waiter a holder may hand its lease to, and which
 * channels to subscribe or drop. The connection itself is {@link SubscriptionConnection}'s; one waiting thread is a {@link Waiter}.
 * <p>
 * A waiter {@linkplain #register registers} for its lock's release channel <em>before</em> its next attempt and waits
 * for the subscription to be confirmed, so a release after that attempt cannot go unnoticed. Each release message (or
 * a release by a holder in this process) wakes one waiter of the channel, the longest waiting one that is not already
 * awake: the others would only lose the race to it. A release by a holder in this process wakes its waiter directly,
 * and the message of that release is then ignored here (its wake-up was given; any later attempt sees the lock as it
 * is). A waiter that leaves without acquiring passes its wake-up on; one that got a read lock wakes all the others
 * (the lock admits them too, and a message may have woken only it). Read-write releases wake every waiter of the
 * channel, and so does a forced release of a read-write lock in the process that made it. None of these wake-ups is
 * sure to come (a publish refused or lost with a connection): every wait also ends with a last attempt at its deadline.
 * Channels are subscribed while they have waiters and unsubscribed once idle: the subscriptions' upkeep on the
 * connection is {@link ChannelSubscriptions}', to which this class hands the connection's confirmations and
 * replacements. Waiters never wait for its commands thread; they wait for a future, up to their own deadline, and poll
 * while their channel is not confirmed (see the fault model in docs/architecture.md).
 */
public final class ReleaseSubscriber implements SubscriptionConnection.Events, AutoCloseable {

	private final ConcurrentHashMap<String, ReleaseChannel> channels = new ConcurrentHashMap<>();

	/**
	 * How long this process holds back its attempt after a release that named another process as the one that has
	 * waited longest: long enough for the message to reach the named process and its attempt to reach Redis most of
	 * the time; when the named process is slower, the others simply race as before. Shorter than the yield after an
	 * own release (3 ms) on purpose (issue 31: 3 ms let the wait p99 of the hot key with 8 processes reach 26 ms). The
	 * named process's lease starts with the others' notes, which the release carries over ({@link #takeCarried}).
	 */
	static final long HOLD_BACK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final ChannelSubscriptions subscriptions;

	/** This process's client id, as releases name it; '' when it never holds back (Redlock's nodes). */
	private final String clientId;

	/**
	 * A subscriber on {@code connectionFactory}; {@code clientId}: this process's client id, which a release message
	 * names when this process has waited longest, or '' to treat every release message as naming this process.
	 */
	public ReleaseSubscriber(RedisConnectionFactory connectionFactory, String keepAliveChannel, long idleNanos,
			EngineThreads threads, String threadName, boolean listenerContainer,
			Consumer<RedisMessageListenerContainer> containerCustomizer, NotificationRefusals refusals,
			String clientId) {
		this.clientId = clientId;
		this.subscriptions = new ChannelSubscriptions(this.channels, this, connectionFactory, keepAliveChannel,
				idleNanos, threads, threadName, listenerContainer, containerCustomizer, refusals);
		this.subscriptions.start();
	}

	/**
	 * Start waiting on {@code channel} as {@code owner}, who asks for a lease of {@code ttlMillis} (what a holder in
	 * this process needs to hand its lease over, with {@code label}, the label the lease then names it by) for the
	 * lock named {@code name} (for the gauges); the caller must {@link #unregister} the waiter in a finally block.
	 */
	public Waiter register(String channel, String owner, String name, long ttlMillis, String label) {
		Thread thread = Thread.currentThread();
		return join(channel, (ch) -> new Waiter(ch, thread, ch.subscribed, owner, name, ttlMillis, label));
	}

	/**
	 * As {@link #register}, for an asynchronous acquisition: no thread waits, {@code wakeUp} runs (under the channel's
	 * monitor, or on a granting holder's thread, so it must only schedule the next step) when a release wakes it, a
	 * holder grants it the lease or reverts a hand-over to it. A holder of this process may hand it the lease (with
	 * {@code label}) if {@code takesHandOvers} (issue 31).
	 */
	public Waiter registerAsync(String channel, String owner, String name, long ttlMillis, String label,
			boolean takesHandOvers, Runnable wakeUp) {
		return join(channel,
				(ch) -> new Waiter(ch, wakeUp, ch.subscribed, owner, name, ttlMillis, label, takesHandOvers));
	}

	/**
	 * As {@link #registerAsync}, for a fair acquisition ({@link FairAcquisition}): {@code handOver} runs (under the
	 * channel's monitor: it must be quick) when a fair release hands this owner the lease, by message or in this
	 * process.
	 */
	public Waiter registerFair(String channel, String owner, String name, long ttlMillis, Runnable wakeUp,
			LongConsumer handOver) {
		return join(channel, (ch) -> new Waiter(ch, wakeUp, handOver, ch.subscribed, owner, name, ttlMillis));
	}

	/** Add the waiter {@code newWaiter} makes to {@code channel}'s waiters, subscribing the channel if it is new. */
	private Waiter join(String channel, Function<ReleaseChannel, Waiter> newWaiter) {
		for (;;) {
			ReleaseChannel ch = this.channels.computeIfAbsent(channel, ReleaseChannel::new);
			synchronized (ch) {
				if (ch.state == ChannelState.DEAD) {
					continue;
				}
				Waiter waiter = newWaiter.apply(ch);
				ch.waiters.addLast(waiter);
				if (ch.state == ChannelState.NEW) {
					ch.state = ChannelState.SUBSCRIBING;
					this.subscriptions.subscribeLater(ch);
				}
				return waiter;
			}
		}
	}

	/**
	 * A fair release (by message, or by a holder of this process that read it in the script's reply) handed the lease
	 * to {@code owner} with {@code token}: tell that waiter if it waits here. Other waiters are not woken: the lock is
	 * taken.
	 */
	public void fairHandedOver(String channel, String owner, long token) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				ch.fairHandedOver(owner, token);
			}
		}
	}

	/**
	 * Reserve the longest waiting waiter of {@code channel} that is between attempts, for a hand-over of the lease
	 * {@code owner} holds; null if there is none. The caller must {@link Waiter#grant grant} or
	 * {@link Waiter#revert revert} the reservation.
	 */
	public @Nullable Waiter reserveForHandOver(String channel, String owner) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch == null) {
			return null;
		}
		synchronized (ch) {
			return ch.reserveForHandOver(owner);
		}
	}

	/**
	 * Whether a waiter of this process that takes hand-overs waits on {@code channel} (a thread, or an asynchronous
	 * acquisition of a kind that hands over locally): one a holder could hand its lease to.
	 */
	public boolean hasHandOverTaker(String channel) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch == null) {
			return false;
		}
		synchronized (ch) {
			return ch.hasHandOverTaker();
		}
	}

	/**
	 * This process released the lock while other processes waited for it: its own threads hold back their attempts
	 * until {@code untilNanos}, so that the waiters the release woke elsewhere get the lock rather than losing it to a
	 * thread here that simply asks again at once.
	 */
	public void yieldUntil(String channel, long untilNanos) {
		for (;;) {
			ReleaseChannel ch = this.channels.computeIfAbsent(channel, ReleaseChannel::new);
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
	public boolean isSubscribed(String channel) {
		return read(channel, false, (ch) -> ch.state == ChannelState.SUBSCRIBED);
	}

	/** Until when this process's threads hold back their attempts on {@code channel}; 0 when they need not. */
	public long yieldingUntil(String channel) {
		long until = read(channel, 0L, (ch) -> ch.yieldUntilNanos);
		return (until != 0 && until - System.nanoTime() > 0) ? until : 0;
	}

	/** Stop waiting; a wake-up the waiter did not use (it did not acquire) goes to the next waiter. */
	public void unregister(Waiter waiter, boolean acquired) {
		unregister(waiter, acquired, false);
	}

	/**
	 * As {@link #unregister(Waiter, boolean)}; {@code admitsOthers}: the waiter acquired a lock that others may hold
	 * with it (a read lock), so every other waiter of the channel that sleeps is woken. A release message wakes one
	 * waiter per process unless it says that it freed the lock for several, and a forced release's message cannot say
	 * it (the script does not know the lease's kind): the first reader that gets in passes the news on.
	 */
	public void unregister(Waiter waiter, boolean acquired, boolean admitsOthers) {
		ReleaseChannel ch = waiter.channel;
		synchronized (ch) {
			ch.waiters.remove(waiter);
			if (waiter.signalled && !acquired) {
				ch.wakeOne();
			}
			else if (acquired && admitsOthers) {
				for (Waiter other : ch.waiters) {
					if (!other.signalled) {
						other.signal();
					}
				}
			}
			if (ch.waiters.isEmpty()) {
				ch.idleSinceNanos = System.nanoTime();
			}
		}
	}

	/**
	 * The lock was freed from this process other than by its holder's release (a forced release, whose message does not
	 * carry a token this process knows): wake a local waiter without waiting for the message, or every one when the
	 * lock may now admit several ({@code all}: a read-write lock, or a fair lock's hand-over channel).
	 */
	void forceReleased(String channel, boolean all) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				if (all) {
					ch.waiters.forEach(Waiter::signal);
				}
				else {
					ch.wakeOne();
				}
			}
		}
	}

	/**
	 * A holder in this process released the lease with {@code token}: wake a local waiter without waiting for the
	 * message, and ignore the message when it comes, as its wake-up has been given. Waking a second local waiter on
	 * it would only send one more attempt that loses to the first (or to the releasing thread itself).
	 */
	public void releasedLocally(String channel, long token) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				if (ch.wakeOne()) {
					ch.expectOwnMessage(Long.toString(token));
				}
			}
		}
	}

	/**
	 * A holder in this process released a read-write lease and published {@code message}: wake every local waiter (the
	 * lock may admit all waiting readers) without waiting for the message, and ignore the message when it comes.
	 */
	public void releasedLocallyToAll(String channel, String message) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				if (!ch.waiters.isEmpty()) {
					ch.waiters.forEach(Waiter::signal);
					ch.expectOwnMessage(message);
				}
			}
		}
	}

	/** {@return the waiters of {@code channel}, longest waiting first (a copy, for tests)} */
	public List<Waiter> waiters(String channel) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch == null) {
			return List.of();
		}
		synchronized (ch) {
			return List.copyOf(ch.waiters);
		}
	}

	/** Waiters currently registered, over all channels. */
	public int waiterCount() {
		int count = 0;
		for (ReleaseChannel ch : this.channels.values()) {
			synchronized (ch) {
				count += ch.waiters.size();
			}
		}
		return count;
	}

	/** Waiters currently registered, by lock name; names without waiters are absent. */
	public Map<String, Integer> waiterCountsByName() {
		Map<String, Integer> counts = new HashMap<>();
		for (ReleaseChannel ch : this.channels.values()) {
			synchronized (ch) {
				for (Waiter waiter : ch.waiters) {
					counts.merge(waiter.name, 1, Integer::sum);
				}
			}
		}
		return counts;
	}

	/**
	 * A release message ({@link ReleaseMessage}): wakes one waiter, unless this process released it. A release that
	 * names another process as the one that has waited longest wakes it too, but its attempt waits out the hold-back
	 * ({@link #HOLD_BACK_NANOS}, through the channel's yield), so that the named process gets there first; one that
	 * names this process (or nobody) ends any hold-back and its waiter tries at once. A hold-back is only a delay:
	 * when the named process has nobody left to try, the others still do after it.
	 */
	@Override
	public void message(String channel, String body) {
		ReleaseMessage message = ReleaseMessage.parse(body);
		if (message.kind() == ReleaseMessage.Kind.FAIR_HAND_OVER) {
			fairHandedOver(channel, message.party(), message.handedToken());
			return;
		}
		ReleaseChannel ch = this.channels.get(channel);
		if (ch != null) {
			synchronized (ch) {
				ch.released(message, this.clientId, HOLD_BACK_NANOS);
			}
		}
	}

	/**
	 * How long the waiters of {@code channel} of this process have waited: the longest waiting one's time since it
	 * registered, in ms; 0 when none waits. Sent with a waiter's attempts, so that its process's note in the lease
	 * says since when it waits ({@code LockScripts.ACQUIRE}).
	 */
	public long waitedMillis(String channel) {
		return read(channel, 0L, ReleaseChannel::waitedMillis);
	}

	/**
	 * The notes of other waiting processes that the last release of {@code channel}, naming this process, carried
	 * over, for this attempt to write into the lease (ACQUIRE's ARGV[9]); taken once, '' when there are none. Written
	 * with the lease this process takes, they let its release name the next oldest rather than find no note.
	 */
	public String takeCarried(String channel) {
		return read(channel, "", ReleaseChannel::takeCarried);
	}

	/** {@code read} of {@code channel} under its monitor; {@code absent} when this process has no such channel. */
	private <T> T read(String channel, T absent, Function<ReleaseChannel, T> read) {
		ReleaseChannel ch = this.channels.get(channel);
		if (ch == null) {
			return absent;
		}
		synchronized (ch) {
			return read.apply(ch);
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
		this.subscriptions.confirmed(channel);
	}

	private void wakeAll() {
		for (ReleaseChannel ch : this.channels.values()) {
			synchronized (ch) {
				ch.waiters.forEach(Waiter::signal);
			}
		}
	}

	/** A new connection replaced a closed one: every channel must be subscribed again on it. */
	@Override
	public void replaced() {
		this.subscriptions.replaced();
	}

	@Override
	public void close() {
		this.subscriptions.close();
	}

}
