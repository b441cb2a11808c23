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
import java.util.concurrent.atomic.AtomicLong;
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

	/** How often a waiter retries while no release message can reach it (its channel is not subscribed). */
	private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

	private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

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

	/** The held (not lost, not ended) lease of each thread and key: what a re-entry re-enters. */
	private final ConcurrentHashMap<ThreadKey, LeaseEntry> heldByThread = new ConcurrentHashMap<>();

	private final AtomicLong ownerSequence = new AtomicLong();

	private final HoldReconciler reconciler;

	/** The lock names acquired or waited for so far; bounded by the names in use, as the meters tagged by them are. */
	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	private final int localHandOvers;

	private volatile boolean closed;

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
		long timeout = this.store.commandTimeoutMillis();
		this.reconciler = new HoldReconciler(this.store, (timeout > 0) ? Math.min(timeout, 5_000) : 2_000,
				threadName + "-reconcile");
	}

	/** Start building a service on the given connection factory. */
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
		try {
			LeaseEntry held = this.heldByThread.get(new ThreadKey(redisKey, Thread.currentThread().getId()));
			if (held != null) {
				Lease reentered = reenter(request, held, start, deadline);
				if (reentered != null) {
					return Optional.of(reentered);
				}
			}
			return acquireNew(request, new Attempt(redisKey, newOwner(), request.ttl().toMillis()), start, deadline);
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
	 * Count one more hold of the lease this thread holds on the key. Returns null when Redis no longer has that lease
	 * (it is then reported lost) or this process ended it meanwhile; the caller then acquires the lock anew.
	 */
	private @Nullable Lease reenter(LockRequest request, LeaseEntry entry, long start, long deadline)
			throws InterruptedException {
		long ttlMillis = request.ttl().toMillis();
		Backoff backoff = new Backoff();
		for (;;) {
			long sent = System.nanoTime();
			long[] reply;
			try {
				reply = this.store.acquire(entry.redisKey, entry.owner, ttlMillis, "", entry.token);
			}
			catch (RuntimeException ex) {
				// A re-entry that runs unanswered counts a hold in Redis that this process does not count: the release
				// of the last hold this process knows ends the lease all the same (see release).
				LockUnavailableException failure = unanswered(request, ex);
				if (System.nanoTime() - deadline >= 0) {
					throw failure;
				}
				TimeUnit.NANOSECONDS.sleep(Math.min(backoff.nextNanos(), Math.max(0, deadline - System.nanoTime())));
				continue;
			}
			if (reply[0] < 0) {
				lostOnHolderCheck(entry);
				return null;
			}
			if (!entry.reenter(ttlMillis, request.autoRenew(), sent)) {
				// Ended here meanwhile (released from another thread, or found lost): the hold just counted is one that
				// nothing in this process knows. Its owner id is not used again, so it can go.
				this.reconciler.discard(entry.key, entry.redisKey, entry.owner, entry.channel);
				return null;
			}
			if (request.autoRenew()) {
				this.watchdog.wakeUp();
			}
			return newLease(request, entry, sent, start);
		}
	}

	/**
	 * Acquire the lock with the fresh owner id of {@code attempt}. When the acquisition ends without a lease after a
	 * call that went unanswered, whatever that call may yet create in Redis is discarded (the owner id is not used
	 * again).
	 */
	private Optional<Lease> acquireNew(LockRequest request, Attempt attempt, long start, long deadline)
			throws InterruptedException {
		Optional<Lease> lease = Optional.empty();
		try {
			lease = firstAttempt(request, attempt, start, deadline);
			return lease;
		}
		finally {
			if (lease.isEmpty() && attempt.unanswered) {
				this.reconciler.discard(request.key(), attempt.redisKey, attempt.owner, attempt.channel);
			}
		}
	}

	private Optional<Lease> firstAttempt(LockRequest request, Attempt attempt, long start, long deadline)
			throws InterruptedException {
		boolean mayWait = !request.waitTime().isZero();
		// Where other threads of this process wait for the key already, join them before the first attempt: it saves
		// the attempt a new waiter otherwise makes once subscribed, and makes this thread one a holder can hand the
		// lease to.
		if (mayWait && (this.subscriber.isSubscribed(attempt.channel) || this.subscriber.yieldingUntil(attempt.channel) != 0)) {
			return awaitRelease(request, attempt, -1, null, start, deadline);
		}
		long sent = System.nanoTime();
		long[] reply;
		try {
			reply = callAcquire(request, attempt, mayWait);
		}
		catch (LockUnavailableException ex) {
			if (!mayWait || System.nanoTime() - deadline >= 0) {
				throw ex;
			}
			return awaitRelease(request, attempt, -1, ex, start, deadline);
		}
		if (reply[0] > 0) {
			return Optional.of(newLease(request, newEntry(request, attempt, reply[1], sent, 0), sent, start));
		}
		if (!mayWait) {
			return notAcquired(request, start);
		}
		return awaitRelease(request, attempt, reply[1], null, start, deadline);
	}

	/**
	 * Wait for the lock, retrying when a release message (or a release in this process) wakes this thread, when the
	 * holder's lease would run out, or not at all if a holder in this process hands the lease over. While the release
	 * channel is not subscribed, and while Redis does not answer, it retries at short intervals instead, until the
	 * deadline.
	 * @param holderTtl the holder's remaining ttl in ms from the last attempt, or -1 if it is not known
	 * @param failure why the last attempt got no answer, or null
	 */
	private Optional<Lease> awaitRelease(LockRequest request, Attempt attempt, long holderTtl,
			@Nullable LockUnavailableException failure, long start, long deadline) throws InterruptedException {
		String channel = attempt.channel;
		ReleaseSubscriber.Waiter waiter = this.subscriber.register(channel, attempt.owner, request.effectiveName(),
				attempt.ttlMillis);
		boolean acquired = false;
		Backoff backoff = new Backoff();
		try {
			// Only attempts made after the subscription is confirmed are sure to hear of a later release; one that is
			// slow to come is not waited for longer than a short poll, nor past the holder's lease.
			long now = System.nanoTime();
			long subscribedBy = now + ((failure != null) ? backoff.nextNanos() : pollNanos());
			if (holderTtl >= 0) {
				subscribedBy = earlier(subscribedBy, now + holderTtlNanos(holderTtl));
			}
			waiter.awaitSubscribed(earlier(subscribedBy, deadline));
			for (;;) {
				if (!waiter.startAttempt()) {
					if (waiter.handedOver()) {
						acquired = true;
						return Optional.of(handedOver(request, attempt, waiter, start));
					}
					continue;
				}
				long yieldUntil = this.subscriber.yieldingUntil(channel);
				if (yieldUntil != 0) {
					waiter.endAttempt();
					if (!waiter.await(earlier(yieldUntil, deadline)) && System.nanoTime() - deadline >= 0) {
						break;
					}
					continue;
				}
				long sent = System.nanoTime();
				long[] reply;
				try {
					reply = callAcquire(request, attempt, true);
				}
				catch (LockUnavailableException ex) {
					waiter.endAttempt();
					failure = ex;
					if (!waiter.await(earlier(System.nanoTime() + backoff.nextNanos(), deadline))
							&& System.nanoTime() - deadline >= 0) {
						break;
					}
					continue;
				}
				failure = null;
				backoff.reset();
				if (reply[0] > 0) {
					acquired = true;
					return Optional.of(newLease(request, newEntry(request, attempt, reply[1], sent, 0), sent, start));
				}
				waiter.endAttempt();
				now = System.nanoTime();
				if (now - deadline >= 0) {
					break;
				}
				long wakeAt = now + holderTtlNanos(reply[1]);
				if (!this.subscriber.isSubscribed(channel)) {
					wakeAt = earlier(wakeAt, now + pollNanos()); // no release message can come: poll
				}
				if (!waiter.await(earlier(wakeAt, deadline)) && System.nanoTime() - deadline >= 0) {
					break;
				}
			}
			if (waiter.leave()) { // handed the lease just as the wait ended: take it
				acquired = true;
				return Optional.of(handedOver(request, attempt, waiter, start));
			}
			if (failure != null) {
				throw new LockUnavailableException(request.key(), "Could not acquire lock '" + request.key()
						+ "' within " + request.waitTime() + ": Redis did not answer (" + failure.getCause() + ")",
						failure.getCause());
			}
			return notAcquired(request, start);
		}
		catch (InterruptedException | RuntimeException ex) {
			if (!acquired && waiter.leave()) {
				// Handed the lease while failing: give it back now rather than leave it to expire.
				try {
					handedOver(request, attempt, waiter, start).release();
				}
				catch (RuntimeException releaseFailure) {
					ex.addSuppressed(releaseFailure);
				}
			}
			throw ex;
		}
		finally {
			if (waiter.handOverUnanswered()) {
				attempt.unanswered = true; // a holder's hand-over to this owner may yet run in Redis
			}
			this.subscriber.unregister(waiter, acquired);
		}
	}

	private Lease handedOver(LockRequest request, Attempt attempt, ReleaseSubscriber.Waiter waiter, long start) {
		LeaseEntry entry = newEntry(request, attempt, waiter.grantedToken(), waiter.grantedAtNanos(),
				waiter.grantedHandOvers());
		return newLease(request, entry, waiter.grantedAtNanos(), start);
	}

	/** When to retry if no release message comes: when the holder's lease runs out, plus jitter against herds. */
	private static long holderTtlNanos(long holderTtlMillis) {
		if (holderTtlMillis < 0) {
			return NO_EXPIRY_RECHECK_NANOS;
		}
		long ttl = TimeUnit.MILLISECONDS.toNanos(holderTtlMillis);
		return ttl + ThreadLocalRandom.current().nextLong(Math.min(MAX_JITTER_NANOS, ttl / 10) + 1);
	}

	/** The interval of a waiter that cannot count on a release message, with jitter. */
	private static long pollNanos() {
		return POLL_NANOS + ThreadLocalRandom.current().nextLong(POLL_NANOS / 2 + 1);
	}

	private static long earlier(long a, long b) {
		return (a - b < 0) ? a : b;
	}

	private long[] callAcquire(LockRequest request, Attempt attempt, boolean willWait) throws InterruptedException {
		try {
			long[] reply = this.store.acquire(attempt.redisKey, attempt.owner, attempt.ttlMillis,
					willWait ? this.clientId : "", 0);
			if (reply[0] < 0) {
				throw new IllegalStateException("The acquire script refused a new owner of '" + request.key() + "'");
			}
			return reply;
		}
		catch (RuntimeException ex) {
			// sent, no answer: Redis may run it yet
			attempt.unanswered = true;
			if (Thread.interrupted()) { // the client gave up waiting for Redis because this thread was interrupted
				InterruptedException interrupted = new InterruptedException();
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw unanswered(request, ex);
		}
	}

	private static LockUnavailableException unanswered(LockRequest request, RuntimeException ex) {
		return new LockUnavailableException(request.key(),
				"Could not acquire lock '" + request.key() + "': Redis did not answer (" + ex.getMessage() + ")", ex);
	}

	/** A new lease of this process, held once by the calling thread. */
	private LeaseEntry newEntry(LockRequest request, Attempt attempt, long token, long sent, int handOvers) {
		LeaseEntry entry = new LeaseEntry(request.key(), attempt.redisKey, attempt.channel, attempt.owner,
				request.effectiveName(), token, attempt.ttlMillis, request.autoRenew(), sent, handOvers);
		this.entries.put(new HoldKey(attempt.redisKey, attempt.owner), entry);
		this.heldByThread.put(new ThreadKey(attempt.redisKey, entry.ownerThreadId), entry);
		this.watchdog.register(entry);
		return entry;
	}

	private Lease newLease(LockRequest request, LeaseEntry entry, long sent, long start) {
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

	/** A fresh owner id: the client id, the acquiring thread, and a number never used before in this process. */
	private String newOwner() {
		return this.clientId + ":" + Thread.currentThread().getId() + ":" + this.ownerSequence.incrementAndGet();
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
			else if (this.reconciler.discardNow(entry.key, entry.redisKey, entry.owner, entry.channel)) {
				// Redis counted holds this process does not (re-entries whose replies were lost): the lease ends with
				// the last hold this process knows
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
				next.markHandOverUnanswered(); // the hand-over may yet run: the waiter's owner may get the lease
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

	/**
	 * Redis did not answer a release: the hold ends here either way. When it was the last, whatever Redis still has of
	 * the lease is discarded once Redis answers again, and expires at its lease time otherwise.
	 */
	private LockUnavailableException unreachableOnRelease(RedisLease lease, LeaseEntry entry, Duration held,
			RuntimeException ex) {
		if (entry.releaseHold(false)) {
			ended(entry);
			this.reconciler.discard(entry.key, entry.redisKey, entry.owner, entry.channel);
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
		this.heldByThread.remove(new ThreadKey(entry.redisKey, entry.ownerThreadId), entry);
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
		this.heldByThread.remove(new ThreadKey(entry.redisKey, entry.ownerThreadId), entry);
		this.watchdog.unregister(entry);
	}

	/**
	 * The leases this service holds now, and those found {@linkplain LeaseSnapshot#lost() lost} whose holders have
	 * not released them yet.
	 */
	public List<LeaseSnapshot> activeLeases() {
		long now = System.nanoTime();
		List<LeaseSnapshot> snapshots = new ArrayList<>(this.entries.size());
		for (LeaseEntry entry : this.entries.values()) {
			snapshots.add(entry.snapshot(now));
		}
		return snapshots;
	}

	/** How many leases this service holds now, not counting lost ones; cheaper than {@code activeLeases()}. */
	public int activeLeaseCount() {
		int held = 0;
		for (LeaseEntry entry : this.entries.values()) {
			if (!entry.isLost()) {
				held++;
			}
		}
		return held;
	}

	/** How many leases were found lost while their holders have not released them yet (still running without them). */
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

	/** Whether the watchdog is failing to renew some held leases, and since when. */
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

	/** Threads of this process currently waiting for a lock held elsewhere. */
	public int waitingThreads() {
		return this.subscriber.waiterCount();
	}

	/** The Redis key of a lock key: {@code <prefix>:{<key>}}; the braces make it a cluster hash tag. */
	public String redisKey(String key) {
		return this.keyPrefix + ":{" + key + "}";
	}

	/** This service's random client id, the prefix of every owner id it writes. */
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
		this.reconciler.close();
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

	private record ThreadKey(String redisKey, long threadId) {
	}

	/** One acquisition: its owner id, fresh and never used for another; whether a call of it went unanswered. */
	private static final class Attempt {

		final String redisKey;

		final String channel;

		final String owner;

		final long ttlMillis;

		/** Set on the acquiring thread only. */
		boolean unanswered;

		Attempt(String redisKey, String owner, long ttlMillis) {
			this.redisKey = redisKey;
			this.channel = channel(redisKey);
			this.owner = owner;
			this.ttlMillis = ttlMillis;
		}

	}

	/** Exponential backoff with jitter between calls that Redis did not answer. */
	private static final class Backoff {

		private long next = MIN_BACKOFF_NANOS;

		long nextNanos() {
			long current = this.next;
			this.next = Math.min(MAX_BACKOFF_NANOS, current * 2);
			return current / 2 + ThreadLocalRandom.current().nextLong(current / 2 + 1);
		}

		void reset() {
			this.next = MIN_BACKOFF_NANOS;
		}

	}

	private final class WatchdogCallbacks implements LeaseWatchdog.Callbacks {

		@Override
		public void renewed(LeaseEntry entry, boolean success) {
			RedisLockService.this.listeners.forEach(listener -> listener.renewed(entry.name, success));
		}

		@Override
		public void lost(LeaseEntry entry, LockLostEvent event) {
			publishLost(entry, event);
			if (event.detection() == LockLostEvent.Detection.RENEWAL_FAILED) {
				// Renewals sent before the lease was given up may still run: held by the network, or sent again by the
				// client on a new connection. Each keeps the lease in Redis for one more lease time, a hold that this
				// process calls lost. Its owner id is not used again (re-entries take a new one; the holder's release
				// finds the lease gone either way), and renewals never create a lease, so once Redis answers it can go.
				RedisLockService.this.reconciler.discard(entry.key, entry.redisKey, entry.owner, entry.channel);
			}
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

		/** The namespace of the lock keys: {@code <prefix>:{<key>}}. Default {@code lock}. */
		public Builder keyPrefix(String keyPrefix) {
			if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.contains("{") || keyPrefix.contains("}")) {
				throw new IllegalArgumentException("Lock key prefix must be non-blank and without braces, but was '" + keyPrefix + "'");
			}
			this.keyPrefix = keyPrefix;
			return this;
		}

		/** The part of the lease time after which the watchdog renews a lease; between 0 and 1, default 1/3. */
		public Builder renewalRatio(double renewalRatio) {
			if (!(renewalRatio > 0 && renewalRatio < 1)) {
				throw new IllegalArgumentException("Lock renewal ratio must be between 0 and 1 (exclusive), but was " + renewalRatio);
			}
			this.renewalRatio = renewalRatio;
			return this;
		}

		/** How long a release channel without waiters stays subscribed, saving a subscribe when waiters return. */
		public Builder idleUnsubscribe(Duration idleUnsubscribe) {
			if (idleUnsubscribe == null || idleUnsubscribe.isNegative()) {
				throw new IllegalArgumentException("Idle unsubscribe delay must not be negative, but was " + idleUnsubscribe);
			}
			this.idleUnsubscribe = idleUnsubscribe;
			return this;
		}

		/** Where {@link LockLostEvent}s are published (asynchronously, so a slow listener cannot delay renewals). */
		public Builder eventPublisher(@Nullable ApplicationEventPublisher eventPublisher) {
			this.eventPublisher = eventPublisher;
			return this;
		}

		/** Add a listener for metrics or tracing. */
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
		 */
		public Builder localHandOvers(int localHandOvers) {
			if (localHandOvers < 0) {
				throw new IllegalArgumentException("Local hand-overs must not be negative, but was " + localHandOvers);
			}
			this.localHandOvers = localHandOvers;
			return this;
		}

		/** The prefix of the service's thread names. */
		public Builder threadNamePrefix(String threadNamePrefix) {
			Assert.hasText(threadNamePrefix, "'threadNamePrefix' must not be blank");
			this.threadNamePrefix = threadNamePrefix;
			return this;
		}

		public RedisLockService build() {
			return new RedisLockService(this);
		}

	}

}
