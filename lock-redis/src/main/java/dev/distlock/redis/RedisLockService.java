package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.kind.LockKinds;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.lease.LeaseView;
import dev.distlock.redis.internal.lease.LockListing;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.single.LeaseAcquirer;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.single.LeaseRegistry;
import dev.distlock.redis.internal.single.LeaseReleaser;
import dev.distlock.redis.internal.single.LeaseWatchdog;
import dev.distlock.redis.internal.single.ReadWriteLocks;
import dev.distlock.redis.internal.store.FairStore;
import dev.distlock.redis.internal.store.HolderQuery;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.StoreScan;
import dev.distlock.redis.internal.support.EngineThreads;
import dev.distlock.redis.internal.wait.ForcedReleaser;
import dev.distlock.redis.internal.wait.NotificationRefusals;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import dev.distlock.redis.internal.wait.Waiter;
import org.jspecify.annotations.Nullable;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * {@link LockService} (and {@link AsyncLockService}) on Redis: reentrant hash leases with fencing tokens, one script call per operation, waiting on
 * release messages instead of polling, and a watchdog that renews held leases and reports lost ones.
 * <p>
 * This class only assembles the engine and is its public face; each role is one class: {@link LeaseAcquirer}
 * (acquisition and waiting), {@link LeaseReleaser} (release, hand-over, extension), {@link LeaseRegistry} (the leases
 * this process holds, and their losses), {@link LeaseWatchdog} (renewals), {@link ReleaseSubscriber} (release
 * messages) with {@link Waiter} (one waiting thread), {@link HoldReconciler} (holds Redis may have unknown to this
 * process), {@link LeaseView} (the operator's view), {@link ForcedReleaser} (an operator's override) and
 * {@link LeaseStore} (the only door to Redis). Its settings come from a {@link RedisLockServiceBuilder}.
 * <p>
 * It is also its own {@link LockOperatorView} and {@link LockForceReleaser}, for the actuator endpoint, the health
 * indicator and the gauges; a wrapper such as {@code ObservedLockService} is neither, so the engine bean is the one
 * they find.
 * <p>
 * One instance per application is the intended use: it owns a random client id (the owner prefix of its leases), one
 * pub/sub connection, and the engine's threads. Two instances behave like two separate applications. Close it on
 * shutdown (a Spring context stops it as a {@link SmartLifecycle}); leases still held then are no longer renewed and
 * expire at their lease time.
 *
 * @since 0.1.0
 */
public class RedisLockService extends EngineService
		implements AsyncLockService, LockOperatorView, LockForceReleaser, LockDirectory, SmartLifecycle, AutoCloseable {

	/**
	 * The phase in which a Spring context stops the service: after the web server and the task schedulers (higher
	 * phases), so that their calls still release their leases, and before the connection factory (phase 0 by default),
	 * whose connections the service still uses while it stops.
	 */
	public static final int LIFECYCLE_PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private static final Log logger = LogFactory.getLog(RedisLockService.class);

	/** How many engine threads run asynchronous callers' blocking calls at most. */
	private static final int ASYNC_THREADS = 2;

	private final LeaseWatchdog watchdog;


	private final ReleaseSubscriber subscriber;

	private final HoldReconciler reconciler;

	private final LeaseRegistry registry;

	private final LeaseAcquirer acquirer;

	private final LeaseView view;

	private final ForcedReleaser forcedReleaser;

	private final HolderQuery holderQuery;

	private final StoreScan scan;

	private final FairStore fairStore;

	/**
	 * The blocking Redis calls of asynchronous callers (attempts off the native path, re-entries, releases) and the
	 * replies they apply: a few engine threads, so a caller's thread (an event loop) never waits for Redis. Handing
	 * work to them must not wait either (BlockHound fails a Reactor thread that parks on a contended lock): the threads
	 * are started with the service, so {@code execute} never creates a worker under the pool's lock, and the queue is a
	 * lock-free {@link LinkedTransferQueue}.
	 */
	private final ThreadPoolExecutor asyncCalls;

	/** The timers of asynchronous acquisitions (retries, polls, deadlines): one engine thread, never waiting on Redis. */
	private final ScheduledThreadPoolExecutor asyncTimers;

	/** Replicas that must acknowledge a new lease; 0 for none (above 0, read-write locks are refused). */
	private final int replicaAcks;

	/**
	 * A service as the builder describes it; use {@link #builder(RedisConnectionFactory)}.
	 * @param builder the settings
	 */
	protected RedisLockService(RedisLockServiceBuilder builder) {
		super(builder.settings.keyPrefix);
		this.replicaAcks = builder.replicaAcks;
		// an ArrayList's forEach runs without an iterator, List.copyOf's allocates one per call (several per operation)
		List<LockListener> listeners = java.util.Collections
			.unmodifiableList(new java.util.ArrayList<>(builder.settings.listeners));
		LeaseStore store = new LeaseStore(builder.connectionFactory, builder.paths.nativeScripts());
		String threadName = builder.settings.threadNamePrefix + "-" + clientId().substring(0, 6);
		ApplicationEventPublisher eventPublisher = builder.settings.eventPublisher;
		EngineThreads threads = new EngineThreads(builder.settings.threadFactory);
		// the events thread starts with the first event or lost-lease action only
		this.registry = new LeaseRegistry(listeners, eventPublisher, threads.singleThread(threadName + "-events"));
		NotificationRefusals refusals = new NotificationRefusals(listeners);
		this.subscriber = new ReleaseSubscriber(builder.connectionFactory, this.keyPrefix + ":__subscriber__",
				builder.settings.idleUnsubscribe.toNanos(), threads, threadName + "-pubsub", builder.paths.listenerContainer(), builder.listenerContainerCustomizer, refusals,
				clientId());
		this.asyncCalls = threads.boundedPool(threadName + "-async", ASYNC_THREADS);
		long timeout = store.commandTimeoutMillis();
		this.reconciler = new HoldReconciler(store, (timeout > 0) ? Math.min(timeout, 5_000) : 2_000,
				builder.fairEntryTtl.toMillis(), listeners, threads, threadName + "-reconcile");
		this.watchdog = new LeaseWatchdog(store.renewals(), builder.settings.renewalRatio, timeout,
				new WatchdogCallbacks(listeners, this.registry, this.reconciler), threads, threadName + "-watchdog");
		// with replica acknowledgements every new holder acquires through the script and WAIT: no hand-overs
		LeaseReleaser releaser = new LeaseReleaser(store, this.subscriber, this.watchdog, this.registry,
				this.reconciler, listeners, clientId(), (builder.replicaAcks > 0) ? 0 : builder.localHandOvers,
				refusals, this.asyncCalls);
		this.asyncTimers = new ScheduledThreadPoolExecutor(1, threads.named(threadName + "-async-timer"));
		// a cancelled timer stays queued until its time (at most the wait's deadline): removing it on cancel would take
		// the queue's lock on the canceller's thread, which may be a Reactor thread
		this.asyncTimers.setRemoveOnCancelPolicy(false);
		this.acquirer = new LeaseAcquirer(store, this.subscriber, this.watchdog, this.registry, this.reconciler,
				releaser, listeners, clientId(), builder.replicaAcks, builder.replicaAckTimeout.toMillis(),
				this.asyncCalls, this.asyncTimers, builder.fairEntryTtl.toMillis(),
				ownerIds(builder.ownerIdParts),
				builder.settings.holderApplication,
				builder.settings.holderInstanceOrHost(),
				builder.settings.storeHolderLabel, LockKinds::of);
		this.view = new LeaseView(this.registry, this.subscriber::waiterCount, this.subscriber::waiterCountsByName);
		this.forcedReleaser = new ForcedReleaser(store, this.subscriber, refusals, clientId());
		this.holderQuery = new HolderQuery(store);
		this.scan = store.scan(this.keyPrefix);
		this.fairStore = store.fair();
	}

	/**
	 * Start building a service on the given connection factory.
	 * @param connectionFactory the connections to Redis
	 * @return a builder with the defaults
	 */
	public static RedisLockServiceBuilder builder(RedisConnectionFactory connectionFactory) {
		return new RedisLockServiceBuilder(connectionFactory);
	}

	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		checkAcquirable(request);
		RuntimeException refused = ReadWriteLocks.refusal(LockKinds.of(request), request, redisKey(request.key()), LockOwner.current(),
				this.registry, this.replicaAcks > 0);
		if (refused != null) {
			throw refused;
		}
		this.view.noteName(request.effectiveName());
		return this.acquirer.tryAcquire(request, redisKey(request.key()));
	}

	/**
	 * {@inheritDoc} No thread waits for it: each attempt is one script call on a small pool of engine threads, and
	 * between attempts the acquisition waits for the release message (or a release in this process) and the engine's
	 * timers. It re-enters {@code owner}'s lease as a thread re-enters its own, and a holder of this process may hand it
	 * the lease as to a waiting thread (since 0.8.0; exclusive locks): its future then completes on the engine's pool.
	 */
	@Override
	public CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner) {
		Assert.notNull(request, "'request' must not be null");
		Assert.notNull(owner, "'owner' must not be null for lock '" + LogSafe.escape(request.key()) + "'");
		if (!isRunning()) {
			return CompletableFuture.failedFuture(closedFor(request.key()));
		}
		RuntimeException refused = ReadWriteLocks.refusal(LockKinds.of(request), request, redisKey(request.key()), owner, this.registry,
				this.replicaAcks > 0);
		if (refused != null) {
			return CompletableFuture.failedFuture(refused);
		}
		this.view.noteName(request.effectiveName());
		return this.acquirer.tryAcquireAsync(request, redisKey(request.key()), owner);
	}

	@Override
	public Optional<LockHolder> holder(String key) {
		LockSettings.checkKey(key, "'key'");
		return this.holderQuery.holder(key, redisKey(key));
	}

	/** {@inheritDoc} On a Cluster, every master in turn; needs {@code +scan} in an ACL. */
	@Override
	public LockPage locks(@Nullable String cursor, int pageSize) {
		return LockListing.page(this.scan, cursor, pageSize, this.keyPrefix);
	}

	/** {@inheritDoc} Here {@code command timeout / (1 − 1.25 × renewal ratio)}, from Lettuce's command timeout. */
	@Override
	public Duration shortestRenewableTtl() {
		return this.watchdog.shortestRenewableTtl();
	}

	/** {@inheritDoc} With replica acknowledgements, exclusive locks only: the other kinds' scripts do not wait. */
	@Override
	public Optional<String> modeRefusal(LockMode mode) {
		return (this.replicaAcks > 0 && mode != LockMode.EXCLUSIVE) ? Optional.of("with replica acknowledgements "
				+ "(distlock.replica-acks) the Redis engine takes exclusive locks only: the scripts of the other kinds "
				+ "do not wait for replicas") : Optional.empty();
	}

	/** {@inheritDoc} A {@code ZCARD} of the lock's queue key (entries of dead waiters count until pruned). */
	@Override
	public long fairQueueLength(String key) {
		LockSettings.checkKey(key, "'key'");
		try {
			return this.fairStore.queueLength(redisKey(key));
		}
		catch (RuntimeException ex) {
			return -1;
		}
	}

	/**
	 * {@inheritDoc} The lease's hash is read, deleted and its release announced in one script, so waiters wake at once.
	 * @throws LockUnavailableException if Redis could not be reached
	 */
	@Override
	public Optional<ForcedRelease> forceRelease(String key) {
		LockSettings.checkKey(key, "'key'");
		return this.forcedReleaser.forceRelease(key, redisKey(key));
	}

	/**
	 * {@return how many replicas must acknowledge a new lease before it counts ({@code distlock.replica-acks}); 0 for
	 * none}
	 * @since 0.7.0
	 */
	public int replicaAcks() {
		return this.replicaAcks;
	}

	@Override
	LeaseView view() {
		return this.view;
	}

	/** The waiters' bookkeeping, for the tests of this package. */
	ReleaseSubscriber subscriber() {
		return this.subscriber;
	}

	/** The reconciler of this service's unknown holds, for the tests of this package. */
	HoldReconciler reconciler() {
		return this.reconciler;
	}

	/** The release channel of a lease: the lease's key with a suffix, so in the lease's hash slot. */
	static String channel(String redisKey) {
		return LockScripts.channel(redisKey);
	}

	@Override
	public void close() {
		if (!markClosed()) {
			return;
		}
		List<LeaseSnapshot> held = this.view.activeLeases().stream().filter(lease -> !lease.lost()).toList();
		if (!held.isEmpty()) {
			// Releasing them would end the mutual exclusion of threads still inside their critical sections; they
			// expire at their lease times instead, as a crashed process's would.
			logger.warn("Lock service stops with " + held.size() + " lease(s) held, no longer renewed; they expire within"
					+ " their lease times: " + held.stream().map(lease -> "'" + LogSafe.escape(lease.key())
					+ "' (token "
							+ lease.fencingToken() + ", " + lease.ttl() + ")").limit(20).toList());
		}
		this.watchdog.close();
		this.reconciler.close();
		this.subscriber.close();
		this.registry.close();
		this.asyncTimers.shutdown();
		this.asyncCalls.shutdown();
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
				this.reconciler.discard(entry, entry.kind.queued());
			}
		}

		@Override
		public void ended(LeaseEntry entry) {
			this.registry.forget(entry);
		}

	}

}
