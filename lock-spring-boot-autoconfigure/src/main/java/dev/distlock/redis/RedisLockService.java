package dev.distlock.redis;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LockUnavailableException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * {@link LockService} on Redis: reentrant hash leases with fencing tokens, one script call per operation, waiting on
 * release messages instead of polling, and a watchdog that renews held leases and reports lost ones.
 * <p>
 * This class only assembles the engine and is its public face; each role is one class: {@link LeaseAcquirer}
 * (acquisition and waiting), {@link LeaseReleaser} (release, hand-over, extension), {@link LeaseRegistry} (the leases
 * this process holds, and their losses), {@link LeaseWatchdog} (renewals), {@link ReleaseSubscriber} (release
 * messages) with {@link Waiter} (one waiting thread), {@link HoldReconciler} (holds Redis may have unknown to this
 * process), {@link LeaseView} (the operator's view), {@link ForcedReleaser} (an operator's override) and
 * {@link LeaseStore} (the only door to Redis).
 * <p>
 * One instance per application is the intended use: it owns a random client id (the owner prefix of its leases), one
 * pub/sub connection, and the engine's threads. Two instances behave like two separate applications. Close it on
 * shutdown (a Spring context stops it as a {@link SmartLifecycle}); leases still held then are no longer renewed and
 * expire at their lease time.
 *
 * @since 0.1.0
 */
public class RedisLockService implements LockService, SmartLifecycle, AutoCloseable {

	/**
	 * The phase in which a Spring context stops the service: after the web server and the task schedulers (higher
	 * phases), so that their calls still release their leases, and before the connection factory (phase 0 by default),
	 * whose connections the service still uses while it stops.
	 */
	public static final int LIFECYCLE_PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private static final Log logger = LogFactory.getLog(RedisLockService.class);

	private final String keyPrefix;

	private final String clientId;

	private final LeaseWatchdog watchdog;

	private final ReleaseSubscriber subscriber;

	private final HoldReconciler reconciler;

	private final LeaseRegistry registry;

	private final LeaseAcquirer acquirer;

	private final LeaseView view;

	private final ForcedReleaser forcedReleaser;

	private final HolderQuery holderQuery;

	private volatile boolean closed;

	/**
	 * A service as the builder describes it; use {@link #builder(RedisConnectionFactory)}.
	 * @param builder the settings
	 */
	protected RedisLockService(Builder builder) {
		this.keyPrefix = builder.keyPrefix;
		this.clientId = newClientId();
		List<LockListener> listeners = List.copyOf(builder.listeners);
		LeaseStore store = new LeaseStore(builder.connectionFactory, builder.paths.nativeScripts());
		String threadName = builder.threadNamePrefix + "-" + this.clientId.substring(0, 6);
		ApplicationEventPublisher eventPublisher = builder.eventPublisher;
		EngineThreads threads = new EngineThreads(builder.threadFactory);
		this.registry = new LeaseRegistry(listeners, eventPublisher,
				(eventPublisher != null) ? singleThread(threads, threadName + "-events") : null);
		this.subscriber = new ReleaseSubscriber(builder.connectionFactory, this.keyPrefix + ":__subscriber__",
				builder.idleUnsubscribe.toNanos(), threads, threadName + "-pubsub", builder.paths.listenerContainer());
		long timeout = store.commandTimeoutMillis();
		this.reconciler = new HoldReconciler(store, (timeout > 0) ? Math.min(timeout, 5_000) : 2_000, threads,
				threadName + "-reconcile");
		this.watchdog = new LeaseWatchdog(store, builder.renewalRatio,
				new WatchdogCallbacks(listeners, this.registry, this.reconciler), threads, threadName + "-watchdog");
		// with replica acknowledgements every new holder acquires through the script and WAIT: no hand-overs
		LeaseReleaser releaser = new LeaseReleaser(store, this.subscriber, this.watchdog, this.registry,
				this.reconciler, listeners, this.clientId, (builder.replicaAcks > 0) ? 0 : builder.localHandOvers);
		this.acquirer = new LeaseAcquirer(store, this.subscriber, this.watchdog, this.registry, this.reconciler,
				releaser, listeners, this.clientId, builder.replicaAcks, builder.replicaAckTimeout.toMillis());
		this.view = new LeaseView(this.registry, this.subscriber);
		this.forcedReleaser = new ForcedReleaser(store, this.subscriber);
		this.holderQuery = new HolderQuery(store);
	}

	/**
	 * Start building a service on the given connection factory.
	 * @param connectionFactory the connections to Redis
	 * @return a builder with the defaults
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		Assert.notNull(request, "'request' must not be null");
		if (this.closed) {
			throw new IllegalStateException("Lock service is closed; cannot acquire '" + request.key() + "'");
		}
		this.view.noteName(request.effectiveName());
		return this.acquirer.tryAcquire(request, redisKey(request.key()));
	}

	@Override
	public Optional<LockHolder> holder(String key) {
		LockSettings.checkKey(key, "'key'");
		return this.holderQuery.holder(key, redisKey(key));
	}

	/**
	 * The leases this service holds now, and those found {@linkplain LeaseSnapshot#lost() lost} whose holders have
	 * not released them yet.
	 * @return the leases, oldest first
	 */
	public List<LeaseSnapshot> activeLeases() {
		return this.view.activeLeases();
	}

	/** {@return how many leases this service holds now, not counting lost ones; cheaper than {@code activeLeases()}} */
	public int activeLeaseCount() {
		return this.view.activeLeaseCount();
	}

	/**
	 * {@return how many leases were found lost while their holders have not released them yet (still running without
	 * them)}
	 */
	public int lostLeaseCount() {
		return this.view.lostLeaseCount();
	}

	/**
	 * The leases held and the threads waiting now, per lock name, in one pass over the held leases and one over the
	 * waiting threads; meant to be taken once per metrics scrape rather than once per name.
	 * @return the leases and waiting threads by lock name
	 */
	public LockActivity activityByName() {
		return this.view.activityByName();
	}

	/**
	 * Call {@code action} with each lock name this service has been asked for: at once with the names seen so far,
	 * and from now on with each new name, on the thread that uses it first, before its first lease or waiting thread
	 * shows in {@link #activityByName()}. For meters per name, which must exist by the time their name has something
	 * to count. The action must be quick; it may be called more than once for a name that is new while it is added.
	 * @param action called with each lock name
	 */
	public void onLockName(Consumer<String> action) {
		this.view.onLockName(action);
	}

	/** {@return whether the watchdog is failing to renew some held leases, and since when} */
	public RenewalStatus renewalStatus() {
		return this.view.renewalStatus();
	}

	/**
	 * Delete the lease on {@code key} whoever holds it, and announce its release so waiters wake: an operator's
	 * override for a lock whose holder is stuck. The holder finds its lease lost at its next renewal or release.
	 * @param key the lock key as callers give it
	 * @return the lease that was deleted, or empty when the key was free
	 * @throws LockUnavailableException if Redis could not be reached
	 */
	public Optional<ForcedRelease> forceRelease(String key) {
		LockSettings.checkKey(key, "'key'");
		return this.forcedReleaser.forceRelease(key, redisKey(key));
	}

	/** {@return threads of this process currently waiting for a lock held elsewhere} */
	public int waitingThreads() {
		return this.view.waitingThreads();
	}

	/**
	 * {@return the Redis key of a lock key: {@code <prefix>:{<key>}}; the braces make it a cluster hash tag}
	 * @param key the lock key as callers give it
	 */
	public String redisKey(String key) {
		return this.keyPrefix + ":{" + key + "}";
	}

	/** {@return this service's random client id, the prefix of every owner id it writes} */
	public String clientId() {
		return this.clientId;
	}

	/** The release channel of a lease: the lease's key with a suffix, so in the lease's hash slot. */
	static String channel(String redisKey) {
		return redisKey + ":released";
	}

	/** The service runs from construction; a context's start has nothing to do. */
	@Override
	public void start() {
	}

	/** Stop renewing and close the pub/sub connection: as {@link #close()}. */
	@Override
	public void stop() {
		close();
	}

	@Override
	public boolean isRunning() {
		return !this.closed;
	}

	@Override
	public int getPhase() {
		return LIFECYCLE_PHASE;
	}

	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		List<LeaseSnapshot> held = this.view.activeLeases().stream().filter(lease -> !lease.lost()).toList();
		if (!held.isEmpty()) {
			// Releasing them would end the mutual exclusion of threads still inside their critical sections; they
			// expire at their lease times instead, as a crashed process's would.
			logger.warn("Lock service stops with " + held.size() + " lease(s) held, no longer renewed; they expire within"
					+ " their lease times: " + held.stream().map(lease -> "'" + lease.key() + "' (token "
							+ lease.fencingToken() + ", " + lease.ttl() + ")").limit(20).toList());
		}
		this.watchdog.close();
		this.reconciler.close();
		this.subscriber.close();
		this.registry.close();
	}

	private static String newClientId() {
		byte[] bytes = new byte[16];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	private static ExecutorService singleThread(EngineThreads threads, String name) {
		return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), threads.named(name));
	}

	/**
	 * The watchdog's news: renewals for the listeners, losses and expiries for the registry (and a lease given up for the
	 * reconciler). Calls nothing back.
	 */
	private record WatchdogCallbacks(List<LockListener> listeners, LeaseRegistry registry, HoldReconciler reconciler)
			implements LeaseWatchdog.Callbacks {

		@Override
		public void renewed(LeaseEntry entry, boolean success) {
			this.listeners.forEach(listener -> listener.renewed(entry.name, success));
		}

		@Override
		public void lost(LeaseEntry entry, LockLostEvent event) {
			this.registry.announceLost(entry, event);
			if (event.detection() == LockLostEvent.Detection.RENEWAL_FAILED) {
				// Renewals sent before the lease was given up may still run: held by the network, or sent again by the
				// client on a new connection. Each keeps the lease in Redis for one more lease time, a hold that this
				// process calls lost. Its owner id is not used again (re-entries take a new one; the holder's release
				// finds the lease gone either way), and renewals never create a lease, so once Redis answers it can go.
				this.reconciler.discard(entry.key, entry.redisKey, entry.owner, entry.channel);
			}
		}

		@Override
		public void ended(LeaseEntry entry) {
			this.registry.forget(entry);
		}

	}

	/** Settings of a {@link RedisLockService}, each checked once by {@link LockSettings}. */
	public static final class Builder {

		/** Whether the factory connects to a Redis Cluster (Lettuce's and Jedis's factories say so; others are not). */
		private static boolean isClusterAware(RedisConnectionFactory connectionFactory) {
			java.lang.reflect.Method method = org.springframework.util.ReflectionUtils
				.findMethod(connectionFactory.getClass(), "isClusterAware");
			return method != null && method.getReturnType() == boolean.class
					&& Boolean.TRUE.equals(org.springframework.util.ReflectionUtils.invokeMethod(method, connectionFactory));
		}

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = "lock";

		private double renewalRatio = 1.0 / 3;

		private Duration idleUnsubscribe = Duration.ofSeconds(1);

		private String threadNamePrefix = "distlock";

		private int localHandOvers = 4;

		private int replicaAcks;

		private Duration replicaAckTimeout = Duration.ofMillis(500);

		private @Nullable ApplicationEventPublisher eventPublisher;

		private @Nullable ThreadFactory threadFactory;

		private final List<LockListener> listeners = new ArrayList<>();

		private EnginePaths paths = EnginePaths.DEFAULT;

		private Builder(RedisConnectionFactory connectionFactory) {
			Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
			this.connectionFactory = connectionFactory;
		}

		/**
		 * The namespace of the lock keys: {@code <prefix>:{<key>}}. Default {@code lock}.
		 * @param keyPrefix the prefix; non-blank, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			this.keyPrefix = LockSettings.checkKeyPrefix(keyPrefix, "'keyPrefix'");
			return this;
		}

		/**
		 * The part of the lease time after which the watchdog renews a lease; between 0 and 1, default 1/3.
		 * @param renewalRatio the ratio, between 0 and 1 (exclusive)
		 * @return this builder
		 */
		public Builder renewalRatio(double renewalRatio) {
			this.renewalRatio = LockSettings.checkRenewalRatio(renewalRatio, "'renewalRatio'");
			return this;
		}

		/**
		 * How long a release channel without waiters stays subscribed, saving a subscribe when waiters return.
		 * @param idleUnsubscribe the delay; not negative
		 * @return this builder
		 */
		public Builder idleUnsubscribe(Duration idleUnsubscribe) {
			this.idleUnsubscribe = LockSettings.checkIdleUnsubscribe(idleUnsubscribe, "'idleUnsubscribe'");
			return this;
		}

		/**
		 * Where {@link LockLostEvent}s are published (asynchronously, so a slow listener cannot delay renewals).
		 * @param eventPublisher the publisher, or {@code null} to publish none
		 * @return this builder
		 */
		public Builder eventPublisher(@Nullable ApplicationEventPublisher eventPublisher) {
			this.eventPublisher = eventPublisher;
			return this;
		}

		/**
		 * Add a listener for metrics or tracing.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder listener(LockListener listener) {
			Assert.notNull(listener, "'listener' must not be null");
			this.listeners.add(listener);
			return this;
		}

		/**
		 * Count a new lease as acquired only once {@code replicas} replicas of the master acknowledged it (Redis's
		 * {@code WAIT}, on the connection the acquisition used), so that it survives a failover to one of them. A
		 * lease that fewer replicas acknowledged within {@code timeout} is deleted again and the attempt retried within
		 * the wait, or failed with {@link dev.distlock.core.LockUnavailableException}. Hand-overs between threads of
		 * this process are off then: every new holder acquires through the script and the acknowledgement. The timeout
		 * must be shorter than the client's command timeout. Not on Redis Cluster. Default 0: no acknowledgement.
		 * @param replicas the replicas that must acknowledge; 0 for none, not negative
		 * @param timeout how long to wait for them; at least 1ms
		 * @return this builder
		 */
		public Builder replicaAcks(int replicas, Duration timeout) {
			this.replicaAcks = LockSettings.checkReplicaAcks(replicas, "'replicas'");
			this.replicaAckTimeout = LockSettings.checkReplicaAckTimeout(timeout, "'timeout'");
			return this;
		}

		/**
		 * How many times in a row a released lease may go straight to another thread of this process waiting for it,
		 * before it is released for every process to compete for; 0 turns hand-overs off. A hand-over costs one round
		 * trip and no failed attempts, where a release and a new acquisition cost two plus one failed attempt per
		 * other waiting process; the bound keeps one busy process from keeping a lock from the others. Default 4.
		 * @param localHandOvers the bound; not negative
		 * @return this builder
		 */
		public Builder localHandOvers(int localHandOvers) {
			this.localHandOvers = LockSettings.checkLocalHandOvers(localHandOvers, "'localHandOvers'");
			return this;
		}

		/**
		 * Where the service's threads come from (e.g. a virtual thread factory); they are renamed by their role. By
		 * default platform daemon threads.
		 * @param threadFactory the factory, or {@code null} for platform daemon threads
		 * @return this builder
		 */
		public Builder threadFactory(@Nullable ThreadFactory threadFactory) {
			this.threadFactory = threadFactory;
			return this;
		}

		/**
		 * The prefix of the service's thread names.
		 * @param threadNamePrefix the prefix; not blank
		 * @return this builder
		 */
		public Builder threadNamePrefix(String threadNamePrefix) {
			Assert.hasText(threadNamePrefix, "'threadNamePrefix' must not be blank");
			this.threadNamePrefix = threadNamePrefix;
			return this;
		}

		/** The engine's Redis path and pub/sub connection (issue 11's measurements); package-private on purpose. */
		Builder paths(EnginePaths paths) {
			this.paths = paths;
			return this;
		}

		/** {@return a new service with these settings} */
		public RedisLockService build() {
			if (this.replicaAcks > 0 && isClusterAware(this.connectionFactory)) {
				throw new IllegalStateException("Replica acknowledgements (distlock.replica-acks=" + this.replicaAcks
						+ ") are not supported on Redis Cluster: WAIT would have to follow each lease script on its "
						+ "shard's connection. Set distlock.replica-acks=0, or use Sentinel or a single master.");
			}
			return new RedisLockService(this);
		}

	}

}
