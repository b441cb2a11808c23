package dev.distlock.redis;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockUnavailableException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * {@link LockService} on Redis: reentrant hash leases with fencing tokens, one script call per operation, waiting on
 * release messages instead of polling, and a watchdog that renews held leases and reports lost ones.
 * <p>
 * One instance per application is the intended use: it owns a random client id (the owner prefix of its leases), one
 * pub/sub connection, and the watchdog's threads. Two instances behave like two separate applications. Close it on
 * shutdown; leases still held then are no longer renewed and expire at their lease time.
 *
 * @since 0.1.0
 */
public class RedisLockService implements LockService, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisLockService.class);

	/** How long the holder's remaining lease time is trusted when it has none (a key without expiry). */
	private static final long NO_EXPIRY_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final long MAX_JITTER_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	/**
	 * How long this process's threads hold back after it released a lock that other processes were waiting for: long
	 * enough for the release message to reach them and their attempt to reach Redis on a loaded machine.
	 */
	private static final long YIELD_NANOS = TimeUnit.MILLISECONDS.toNanos(3);

	private final String keyPrefix;

	private final String clientId;

	private final LeaseStore store;

	private final LeaseWatchdog watchdog;

	private final ReleaseSubscriber subscriber;

	private final List<LockListener> listeners;

	private final @Nullable ApplicationEventPublisher eventPublisher;

	private final @Nullable ExecutorService events;

	private final ConcurrentHashMap<HoldKey, LeaseEntry> entries = new ConcurrentHashMap<>();

	/** The lock names acquired or waited for so far; bounded by the names in use, as the meters tagged by them are. */
	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	private final int localHandOvers;

	private volatile boolean closed;

	/**
	 * A service as the builder describes it; use {@link #builder(RedisConnectionFactory)}.
	 * @param builder the settings
	 */
	protected RedisLockService(Builder builder) {
		this.keyPrefix = builder.keyPrefix;
		this.clientId = newClientId();
		this.store = new LeaseStore(builder.connectionFactory);
		this.listeners = List.copyOf(builder.listeners);
		this.localHandOvers = builder.localHandOvers;
		this.eventPublisher = builder.eventPublisher;
		String threadName = builder.threadNamePrefix + "-" + this.clientId.substring(0, 6);
		this.events = (this.eventPublisher != null) ? singleThread(threadName + "-events") : null;
		this.subscriber = new ReleaseSubscriber(builder.connectionFactory, this.keyPrefix + ":__subscriber__",
				builder.idleUnsubscribe.toNanos(), threadName + "-pubsub");
		this.watchdog = new LeaseWatchdog(this.store, builder.renewalRatio, new WatchdogCallbacks(), threadName + "-watchdog");
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
		long start = System.nanoTime();
		long deadline = start + request.waitTime().toNanos();
		noteName(request.effectiveName());
		String redisKey = redisKey(request.key());
		String owner = this.clientId + ":" + Thread.currentThread().getId();
		long ttlMillis = request.ttl().toMillis();
		String channel = channel(redisKey);
		boolean mayWait = !request.waitTime().isZero();
		try {
			// Where other threads of this process wait for the key already, join them before the first attempt: it
			// saves the attempt a new waiter otherwise makes once subscribed, and makes this thread one a holder can
			// hand the lease to.
			if (mayWait && (this.subscriber.isSubscribed(channel) || this.subscriber.yieldingUntil(channel) != 0)) {
				return awaitRelease(request, redisKey, owner, ttlMillis, -1, start, deadline);
			}
			long sent = System.nanoTime();
			long[] reply = callAcquire(request, redisKey, owner, ttlMillis, mayWait);
			if (reply[0] > 0) {
				return Optional.of(acquired(request, redisKey, owner, reply[1], sent, start, 0));
			}
			if (!mayWait) {
				return notAcquired(request, start);
			}
			return awaitRelease(request, redisKey, owner, ttlMillis, reply[1], start, deadline);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			LockInterruptedException failure = new LockInterruptedException(request.key(), ex);
			this.listeners.forEach(listener -> listener.notAcquired(request, Duration.ofNanos(System.nanoTime() - start), failure));
			throw failure;
		}
		catch (LockUnavailableException ex) {
			this.listeners.forEach(listener -> listener.notAcquired(request, Duration.ofNanos(System.nanoTime() - start), ex));
			throw ex;
		}
	}

	/**
	 * Wait for the lock, retrying when a release message (or a release in this process) wakes this thread, when the
	 * holder's lease would run out, or not at all if a holder in this process hands the lease over.
	 * @param holderTtl the holder's remaining ttl in ms from the last attempt, or -1 if no attempt was made yet
	 */
	private Optional<Lease> awaitRelease(LockRequest request, String redisKey, String owner, long ttlMillis,
			long holderTtl, long start, long deadline) throws InterruptedException {
		String channel = channel(redisKey);
		ReleaseSubscriber.Waiter waiter = this.subscriber.register(channel, owner, request.effectiveName(), ttlMillis);
		boolean acquired = false;
		try {
			// Only attempts made after the subscription is confirmed are sure to hear of a later release; a holder
			// whose lease runs out earlier is retried then, even if pub/sub is slow to answer.
			long subscribedBy = (holderTtl >= 0) ? System.nanoTime() + holderTtlNanos(holderTtl) : deadline;
			waiter.awaitSubscribed((subscribedBy - deadline < 0) ? subscribedBy : deadline);
			for (;;) {
				if (!waiter.startAttempt()) {
					if (waiter.handedOver()) {
						acquired = true;
						return Optional.of(handedOver(request, redisKey, owner, waiter, start));
					}
					continue;
				}
				long yieldUntil = this.subscriber.yieldingUntil(channel);
				if (yieldUntil != 0) {
					waiter.endAttempt();
					if (!waiter.await((yieldUntil - deadline < 0) ? yieldUntil : deadline)
							&& System.nanoTime() - deadline >= 0) {
						break;
					}
					continue;
				}
				long sent = System.nanoTime();
				long[] reply = callAcquire(request, redisKey, owner, ttlMillis, true);
				if (reply[0] > 0) {
					acquired = true;
					return Optional.of(acquired(request, redisKey, owner, reply[1], sent, start, 0));
				}
				waiter.endAttempt();
				long now = System.nanoTime();
				if (now - deadline >= 0) {
					break;
				}
				long wakeAt = now + holderTtlNanos(reply[1]);
				if (!waiter.await((wakeAt - deadline < 0) ? wakeAt : deadline) && System.nanoTime() - deadline >= 0) {
					break;
				}
			}
			if (waiter.leave()) { // handed the lease just as the wait ended: take it
				acquired = true;
				return Optional.of(handedOver(request, redisKey, owner, waiter, start));
			}
			return notAcquired(request, start);
		}
		catch (InterruptedException | RuntimeException ex) {
			if (!acquired && waiter.leave()) {
				// Handed the lease while failing: give it back now rather than leave it to expire.
				try {
					handedOver(request, redisKey, owner, waiter, start).release();
				}
				catch (RuntimeException releaseFailure) {
					ex.addSuppressed(releaseFailure);
				}
			}
			throw ex;
		}
		finally {
			this.subscriber.unregister(waiter, acquired);
		}
	}

	private Lease handedOver(LockRequest request, String redisKey, String owner, ReleaseSubscriber.Waiter waiter,
			long start) {
		return acquired(request, redisKey, owner, waiter.grantedToken(), waiter.grantedAtNanos(), start,
				waiter.grantedHandOvers());
	}

	/** When to retry if no release message comes: when the holder's lease runs out, plus jitter against herds. */
	private static long holderTtlNanos(long holderTtlMillis) {
		if (holderTtlMillis < 0) {
			return NO_EXPIRY_RECHECK_NANOS;
		}
		long ttl = TimeUnit.MILLISECONDS.toNanos(holderTtlMillis);
		return ttl + ThreadLocalRandom.current().nextLong(Math.min(MAX_JITTER_NANOS, ttl / 10) + 1);
	}

	private long[] callAcquire(LockRequest request, String redisKey, String owner, long ttlMillis, boolean willWait)
			throws InterruptedException {
		try {
			return this.store.acquire(redisKey, owner, ttlMillis, willWait ? this.clientId : "");
		}
		catch (RuntimeException ex) {
			if (Thread.interrupted()) { // the client gave up waiting for Redis because this thread was interrupted
				InterruptedException interrupted = new InterruptedException();
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw new LockUnavailableException(request.key(),
					"Could not acquire lock '" + request.key() + "': Redis did not answer (" + ex.getMessage() + ")", ex);
		}
	}

	private Lease acquired(LockRequest request, String redisKey, String owner, long token, long sent, long start,
			int handOvers) {
		long ttlMillis = request.ttl().toMillis();
		LeaseEntry[] created = new LeaseEntry[1];
		LeaseEntry entry = this.entries.compute(new HoldKey(redisKey, owner), (key, existing) -> {
			if (existing != null && existing.token == token && existing.reenter(ttlMillis, request.autoRenew(), sent)) {
				return existing;
			}
			created[0] = new LeaseEntry(request.key(), redisKey, channel(redisKey), owner, request.effectiveName(), token,
					ttlMillis, request.autoRenew(), sent, handOvers);
			return created[0];
		});
		if (created[0] != null) {
			this.watchdog.register(entry);
		}
		else if (request.autoRenew()) {
			this.watchdog.wakeUp();
		}
		RedisLease lease = new RedisLease(this, entry, request.ttl(), sent);
		Duration waited = Duration.ofNanos(sent - start);
		this.listeners.forEach(listener -> listener.acquired(request, lease, waited));
		return lease;
	}

	private Optional<Lease> notAcquired(LockRequest request, long start) {
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		this.listeners.forEach(listener -> listener.notAcquired(request, waited, null));
		return Optional.empty();
	}

	void release(RedisLease lease) {
		LeaseEntry entry = lease.entry;
		Duration held = Duration.ofNanos(System.nanoTime() - lease.acquiredAtNanos);
		if (entry.handOvers < this.localHandOvers && entry.holds() == 1 && entry.state() == LeaseEntry.State.HELD) {
			ReleaseSubscriber.Waiter next = this.subscriber.reserveForHandOver(entry.channel, entry.owner);
			if (next != null && handOver(lease, entry, next, held)) {
				return;
			}
		}
		long[] reply;
		entry.releaseStarting();
		try {
			reply = this.store.release(entry.redisKey, entry.owner, entry.token, entry.channel, this.clientId);
		}
		catch (RuntimeException ex) {
			throw unreachableOnRelease(lease, entry, held, ex);
		}
		long left = reply[0];
		if (left < 0) {
			LockLostEvent event = lostOnHolderCheck(entry);
			releasedLost(entry);
			this.listeners.forEach(listener -> listener.released(lease, held, false));
			throw new LockLostException(event);
		}
		if (entry.releaseHold(left == 0)) {
			ended(entry);
			if (left == 0) {
				if (reply[1] == 1) {
					this.subscriber.yieldUntil(entry.channel, System.nanoTime() + YIELD_NANOS);
				}
				this.subscriber.releasedLocally(entry.channel, entry.token);
			}
		}
		this.listeners.forEach(listener -> listener.released(lease, held, true));
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			throw new LockLostException(lost);
		}
	}

	/**
	 * Hand the lease straight to {@code next}, a thread of this process waiting for it: one round trip, no release
	 * message, no race with other processes' waiters. At most {@link Builder#localHandOvers} times in a row, so that
	 * other processes get their turn. Returns false when the lease has to be released the normal way.
	 */
	private boolean handOver(RedisLease lease, LeaseEntry entry, ReleaseSubscriber.Waiter next, Duration held) {
		boolean granted = false;
		try {
			long sent = System.nanoTime();
			long token;
			entry.releaseStarting();
			try {
				token = this.store.handOver(entry.redisKey, entry.owner, entry.token, next.owner, next.ttlMillis);
			}
			catch (RuntimeException ex) {
				throw unreachableOnRelease(lease, entry, held, ex);
			}
			if (token == -2) {
				return false;
			}
			if (token < 0) {
				LockLostEvent event = lostOnHolderCheck(entry);
				releasedLost(entry);
				this.listeners.forEach(listener -> listener.released(lease, held, false));
				throw new LockLostException(event);
			}
			entry.releaseHold(true);
			ended(entry);
			next.grant(token, sent, entry.handOvers + 1);
			granted = true;
		}
		finally {
			if (!granted) {
				next.revert();
			}
		}
		this.listeners.forEach(listener -> listener.released(lease, held, true));
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			throw new LockLostException(lost);
		}
		return true;
	}

	/** Redis did not answer a release: the hold ends here either way, so the lease expires on its own. */
	private LockUnavailableException unreachableOnRelease(RedisLease lease, LeaseEntry entry, Duration held,
			RuntimeException ex) {
		if (entry.releaseHold(false)) {
			ended(entry);
		}
		this.listeners.forEach(listener -> listener.released(lease, held, false));
		return new LockUnavailableException(entry.key, "Could not release lock '" + entry.key
				+ "': Redis did not answer; the lease expires within " + entry.ttlMillis() + "ms (" + ex.getMessage() + ")", ex);
	}

	void extend(RedisLease lease, long millis, boolean add) {
		LeaseEntry entry = lease.entry;
		LockLostEvent lost = entry.lostEvent();
		if (lost != null) {
			throw new LockLostException(lost);
		}
		long sent = System.nanoTime();
		long remaining;
		try {
			remaining = this.store.extend(entry.redisKey, entry.owner, entry.token, millis, add);
		}
		catch (RuntimeException ex) {
			throw new LockUnavailableException(entry.key,
					"Could not " + (add ? "extend" : "renew") + " lock '" + entry.key + "': Redis did not answer (" + ex.getMessage() + ")", ex);
		}
		if (remaining < 0) {
			throw new LockLostException(lostOnHolderCheck(entry));
		}
		entry.confirmed(sent, remaining);
	}

	/** The holder found its lease gone: record the loss (publishing it once) and return its event. */
	private LockLostEvent lostOnHolderCheck(LeaseEntry entry) {
		LockLostEvent event = entry.markLostByHolder();
		if (event != null) {
			publishLost(entry, event);
			return event;
		}
		LockLostEvent earlier = entry.lostEvent();
		Assert.state(earlier != null, "A lost lease has an event");
		return earlier;
	}

	/**
	 * A lease was found lost: stop renewing it, and tell the listeners and the application. The entry stays listed (as
	 * lost) until its holder releases it, so that an operator can see a holder still running without its lock.
	 */
	private void publishLost(LeaseEntry entry, LockLostEvent event) {
		this.watchdog.unregister(entry);
		logger.warn("Lock '" + event.key() + "' (fencing token " + event.fencingToken() + ", owner " + event.owner()
				+ ") was lost: " + event.detection().description());
		this.listeners.forEach(listener -> listener.lost(event));
		ApplicationEventPublisher publisher = this.eventPublisher;
		ExecutorService executor = this.events;
		if (publisher != null && executor != null) {
			try {
				executor.execute(() -> publisher.publishEvent(event));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not publish " + event, ex);
			}
		}
	}

	/** The holder released a hold of a lost lease (its store found the lease gone): forget it with its last hold. */
	private void releasedLost(LeaseEntry entry) {
		if (entry.releaseHold(false)) {
			ended(entry);
		}
	}

	private void ended(LeaseEntry entry) {
		this.entries.remove(new HoldKey(entry.redisKey, entry.owner), entry);
		this.watchdog.unregister(entry);
	}

	/**
	 * The leases this service holds now, and those found {@linkplain LeaseSnapshot#lost() lost} whose holders have
	 * not released them yet.
	 * @return the leases, oldest first
	 */
	public List<LeaseSnapshot> activeLeases() {
		long now = System.nanoTime();
		List<LeaseSnapshot> snapshots = new ArrayList<>(this.entries.size());
		for (LeaseEntry entry : this.entries.values()) {
			snapshots.add(entry.snapshot(now));
		}
		return snapshots;
	}

	/** {@return how many leases this service holds now, not counting lost ones; cheaper than {@code activeLeases()}} */
	public int activeLeaseCount() {
		int held = 0;
		for (LeaseEntry entry : this.entries.values()) {
			if (!entry.isLost()) {
				held++;
			}
		}
		return held;
	}

	/**
	 * {@return how many leases were found lost while their holders have not released them yet (still running without
	 * them)}
	 */
	public int lostLeaseCount() {
		int lost = 0;
		for (LeaseEntry entry : this.entries.values()) {
			if (entry.isLost()) {
				lost++;
			}
		}
		return lost;
	}

	/**
	 * The leases held and the threads waiting now, per lock name, in one pass over the held leases and one over the
	 * waiting threads; meant to be taken once per metrics scrape rather than once per name.
	 * @return the leases and waiting threads by lock name
	 */
	public LockActivity activityByName() {
		Map<String, Integer> held = new HashMap<>();
		for (LeaseEntry entry : this.entries.values()) {
			if (!entry.isLost()) {
				held.merge(entry.name, 1, Integer::sum);
			}
		}
		return new LockActivity(held, this.subscriber.waiterCountsByName());
	}

	/**
	 * Call {@code action} with each lock name this service has been asked for: at once with the names seen so far,
	 * and from now on with each new name, on the thread that uses it first, before its first lease or waiting thread
	 * shows in {@link #activityByName()}. For meters per name, which must exist by the time their name has something
	 * to count. The action must be quick; it may be called more than once for a name that is new while it is added.
	 * @param action called with each lock name
	 */
	public void onLockName(Consumer<String> action) {
		Assert.notNull(action, "'action' must not be null");
		this.nameActions.add(action);
		for (String name : this.names) {
			action.accept(name);
		}
	}

	/** One set lookup per acquisition: the price of per-name gauges that exist before their name's first lease. */
	private void noteName(String name) {
		if (!this.names.contains(name) && this.names.add(name)) {
			for (Consumer<String> action : this.nameActions) {
				try {
					action.accept(name);
				}
				catch (RuntimeException ex) {
					logger.warn("Lock name action failed for '" + name + "'", ex);
				}
			}
		}
	}

	/** {@return whether the watchdog is failing to renew some held leases, and since when} */
	public RenewalStatus renewalStatus() {
		int failing = 0;
		Instant since = null;
		String lastError = null;
		for (LeaseEntry entry : this.entries.values()) {
			Instant entrySince = entry.renewalFailingSince();
			if (entrySince != null) {
				failing++;
				if (since == null || entrySince.isBefore(since)) {
					since = entrySince;
				}
				String error = entry.lastRenewalError();
				lastError = (error != null) ? error : lastError;
			}
		}
		return (failing == 0) ? RenewalStatus.HEALTHY : new RenewalStatus(failing, since, lastError);
	}

	/**
	 * Delete the lease on {@code key} whoever holds it, and announce its release so waiters wake: an operator's
	 * override for a lock whose holder is stuck. The holder finds its lease lost at its next renewal or release.
	 * @param key the lock key as callers give it
	 * @return the lease that was deleted, or empty when the key was free
	 * @throws LockUnavailableException if Redis could not be reached
	 */
	public Optional<ForcedRelease> forceRelease(String key) {
		Assert.hasText(key, "'key' must not be blank");
		String redisKey = redisKey(key);
		String channel = channel(redisKey);
		List<?> fields;
		try {
			fields = this.store.forceRelease(redisKey, channel);
		}
		catch (RuntimeException ex) {
			throw new LockUnavailableException(key, "Could not force-release lock '" + key + "': Redis did not answer ("
					+ ex.getMessage() + ")", ex);
		}
		if (fields.isEmpty()) {
			return Optional.empty();
		}
		String owner = "";
		long holds = 0;
		long token = 0;
		for (int i = 0; i + 1 < fields.size(); i += 2) {
			String field = String.valueOf(fields.get(i));
			String value = String.valueOf(fields.get(i + 1));
			if (LockScripts.TOKEN_FIELD.equals(field)) {
				token = Long.parseLong(value);
			}
			else if (!field.startsWith(LockScripts.WAITER_PREFIX)) {
				owner = field;
				holds = Long.parseLong(value);
			}
		}
		this.subscriber.releasedLocally(channel);
		return Optional.of(new ForcedRelease(key, owner, holds, token));
	}

	/** {@return threads of this process currently waiting for a lock held elsewhere} */
	public int waitingThreads() {
		return this.subscriber.waiterCount();
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

	private static String channel(String redisKey) {
		return redisKey + ":released";
	}

	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.watchdog.close();
		this.subscriber.close();
		if (this.events != null) {
			this.events.shutdown();
		}
	}

	private static String newClientId() {
		byte[] bytes = new byte[16];
		new SecureRandom().nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	private static ExecutorService singleThread(String name) {
		return new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), runnable -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		});
	}

	private record HoldKey(String redisKey, String owner) {
	}

	private final class WatchdogCallbacks implements LeaseWatchdog.Callbacks {

		@Override
		public void renewed(LeaseEntry entry, boolean success) {
			RedisLockService.this.listeners.forEach(listener -> listener.renewed(entry.name, success));
		}

		@Override
		public void lost(LeaseEntry entry, LockLostEvent event) {
			publishLost(entry, event);
		}

		@Override
		public void ended(LeaseEntry entry) {
			RedisLockService.this.ended(entry);
		}

	}

	/** Settings of a {@link RedisLockService}. */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = "lock";

		private double renewalRatio = 1.0 / 3;

		private Duration idleUnsubscribe = Duration.ofSeconds(1);

		private String threadNamePrefix = "distlock";

		private int localHandOvers = 4;

		private @Nullable ApplicationEventPublisher eventPublisher;

		private final List<LockListener> listeners = new ArrayList<>();

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
			if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.contains("{") || keyPrefix.contains("}")) {
				throw new IllegalArgumentException("Lock key prefix must be non-blank and without braces, but was '" + keyPrefix + "'");
			}
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * The part of the lease time after which the watchdog renews a lease; between 0 and 1, default 1/3.
		 * @param renewalRatio the ratio, between 0 and 1 (exclusive)
		 * @return this builder
		 */
		public Builder renewalRatio(double renewalRatio) {
			if (!(renewalRatio > 0 && renewalRatio < 1)) {
				throw new IllegalArgumentException("Lock renewal ratio must be between 0 and 1 (exclusive), but was " + renewalRatio);
			}
			this.renewalRatio = renewalRatio;
			return this;
		}

		/**
		 * How long a release channel without waiters stays subscribed, saving a subscribe when waiters return.
		 * @param idleUnsubscribe the delay; not negative
		 * @return this builder
		 */
		public Builder idleUnsubscribe(Duration idleUnsubscribe) {
			if (idleUnsubscribe == null || idleUnsubscribe.isNegative()) {
				throw new IllegalArgumentException("Idle unsubscribe delay must not be negative, but was " + idleUnsubscribe);
			}
			this.idleUnsubscribe = idleUnsubscribe;
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
		 * How many times in a row a released lease may go straight to another thread of this process waiting for it,
		 * before it is released for every process to compete for; 0 turns hand-overs off. A hand-over costs one round
		 * trip and no failed attempts, where a release and a new acquisition cost two plus one failed attempt per
		 * other waiting process; the bound keeps one busy process from keeping a lock from the others. Default 4.
		 * @param localHandOvers the bound; not negative
		 * @return this builder
		 */
		public Builder localHandOvers(int localHandOvers) {
			if (localHandOvers < 0) {
				throw new IllegalArgumentException("Local hand-overs must not be negative, but was " + localHandOvers);
			}
			this.localHandOvers = localHandOvers;
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

		/** {@return a new service with these settings} */
		public RedisLockService build() {
			return new RedisLockService(this);
		}

	}

}
