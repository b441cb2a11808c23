package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.core.LockListener;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.EngineThreads;
import dev.distlock.redis.internal.wait.ForcedReleaser;
import dev.distlock.redis.internal.wait.NotificationRefusals;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import dev.distlock.redis.internal.wait.Waiter;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Waiting for a Redlock lease on the release messages of every node: one {@link ReleaseSubscriber} per node (its own
 * pub/sub connection), and one {@link Waiter} per node for a waiting thread. A release message from any node wakes the
 * thread; it then tries again on all nodes. While fewer than a quorum of its channels are confirmed (a node down, a
 * subscription on its way) the thread also polls, every {@value #POLL_MILLIS} ms or so, since a release could then go
 * unheard.
 */
public final class RedlockWaiting implements AutoCloseable {

	static final long POLL_MILLIS = 25;

	private final List<ReleaseSubscriber> subscribers;

	private final int quorum;

	private final NotificationRefusals refusals;

	public RedlockWaiting(List<RedisConnectionFactory> factories, String keepAliveChannel, long idleNanos,
			EngineThreads threads, String threadName, boolean listenerContainer, List<LockListener> listeners) {
		NotificationRefusals refusals = new NotificationRefusals(listeners);
		this.refusals = refusals;
		List<ReleaseSubscriber> list = new ArrayList<>();
		for (int i = 0; i < factories.size(); i++) {
			list.add(new ReleaseSubscriber(factories.get(i), keepAliveChannel, idleNanos, threads,
					threadName + "-" + i, listenerContainer, (container) -> {
					}, refusals, ""));
		}
		this.subscribers = List.copyOf(list);
		this.quorum = factories.size() / 2 + 1;
	}

	/** Start waiting on {@code channel} on every node; {@link Registration#close() close} it in a finally block. */
	Registration register(String channel, String owner, String name, long ttlMillis) {
		List<Waiter> waiters = new ArrayList<>(this.subscribers.size());
		for (ReleaseSubscriber subscriber : this.subscribers) {
			waiters.add(subscriber.register(channel, owner, name, ttlMillis, ""));
		}
		return new Registration(channel, waiters);
	}

	/** {@return an operator's forced release on node {@code node}, which wakes this process's waiters there} */
	public ForcedReleaser forcedReleaser(int node, LeaseStore store, String clientId) {
		return new ForcedReleaser(store, this.subscribers.get(node), this.refusals, clientId);
	}

	/** {@return waiting threads over all nodes' subscribers, by lock name (each thread counted once)} */
	public Map<String, Integer> waitersByName() {
		// every waiting thread registers on every node: the first subscriber's count is the count of threads
		return this.subscribers.isEmpty() ? new HashMap<>() : this.subscribers.get(0).waiterCountsByName();
	}

	public int waiterCount() {
		return this.subscribers.isEmpty() ? 0 : this.subscribers.get(0).waiterCount();
	}

	@Override
	public void close() {
		this.subscribers.forEach(ReleaseSubscriber::close);
	}

	/** One thread's wait on one lock, on every node. */
	final class Registration implements AutoCloseable {

		private final String channel;

		private final List<Waiter> waiters;

		private boolean acquired;

		Registration(String channel, List<Waiter> waiters) {
			this.channel = channel;
			this.waiters = waiters;
		}

		/** {@return whether a quorum of the nodes' channels are confirmed: later releases there will be heard} */
		boolean confirmed() {
			int count = 0;
			for (ReleaseSubscriber subscriber : RedlockWaiting.this.subscribers) {
				if (subscriber.isSubscribed(this.channel)) {
					count++;
				}
			}
			return count >= RedlockWaiting.this.quorum;
		}

		/**
		 * Park until a release message from any node, {@code untilNanos}, or an interrupt; true if woken by a message.
		 * Consumes the wake-ups.
		 */
		boolean await(long untilNanos) throws InterruptedException {
			if (!Waiter.parkUntil(this::signalled, untilNanos, this)) {
				return false;
			}
			for (Waiter waiter : this.waiters) {
				waiter.signalled = false;
			}
			return true;
		}

		private boolean signalled() {
			for (Waiter waiter : this.waiters) {
				if (waiter.signalled) {
					return true;
				}
			}
			return false;
		}

		/** The waiting thread acquired the lease (a wake-up it holds is not passed on). */
		void acquired() {
			this.acquired = true;
		}

		@Override
		public void close() {
			for (int i = 0; i < this.waiters.size(); i++) {
				RedlockWaiting.this.subscribers.get(i).unregister(this.waiters.get(i), this.acquired);
			}
		}

	}

}
