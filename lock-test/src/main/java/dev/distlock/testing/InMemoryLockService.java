package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LogSafe;
import dev.distlock.core.RenewalStatus;
import dev.distlock.core.StoredLock;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * A lock engine in memory, with the Redis engine's semantics, for tests: an application's {@code LockService} bean
 * in a test without Redis, or one instance of several sharing an {@link InMemoryLockStore} as instances share a Redis.
 * Not a stub: leases have lease times on the store's {@link LockClock} (a fixed lease expires, a renewed one is kept by
 * a watchdog), owners re-enter their leases (threads, and the owners of asynchronous and reactive work), fencing
 * tokens only grow, waits end at their deadlines or when interrupted, fair locks hand the key over in the order of
 * arrival, read-write locks and permits ({@code LockMode.PERMITS}, since 0.8.0) share and exclude as the Redis
 * engine's do, and a lease the store no longer has is found
 * lost as the Redis engine finds it (its {@code LockLostEvent}, the listeners, {@link Lease#onLost}, and
 * {@code LockLostException} at release).
 * <p>
 * It is its own {@link LockOperatorView} and {@link LockForceReleaser}, so the {@code locks} actuator endpoint, the
 * health indicator and the gauges work on it unchanged: declare it as a bean of its own type. Its
 * {@link dev.distlock.core.LockListener}s (the starter's meters are one) hear what they hear from the Redis engine,
 * from the thread that caused it (the store's timer or the thread advancing a manual clock for renewals and losses).
 * <p>
 * What differs from Redis is only what memory cannot fail at: nothing is lost in transit. The store still fails when
 * the test tells it to ({@link InMemoryLockStore#makeUnreachable()}, {@link InMemoryLockStore#failNextCalls(int)}),
 * with the Redis engine's exceptions. The watchdog renews a lease every {@code ttl × renewalRatio} on the store's
 * clock, and tells its listeners once per lease for each catch-up of the store in which renewals fell due.
 * <p>
 * Thread-safe: every operation is one step under the store's monitor (see {@link InMemoryLockStore}).
 *
 * <pre class="code">
 * ManualLockClock clock = LockClock.manual();
 * InMemoryLockStore store = new InMemoryLockStore(clock);
 * InMemoryLockService instanceA = InMemoryLockService.builder(store).build();
 * InMemoryLockService instanceB = InMemoryLockService.builder(store).build();
 * Lease lease = instanceA.acquire(LockRequest.of("sku-1", Duration.ofSeconds(10), Duration.ZERO).withFixedLease());
 * clock.advance(Duration.ofSeconds(10));   // the fixed lease expires
 * instanceB.acquire("sku-1", Duration.ofSeconds(10), Duration.ZERO);   // a greater fencing token
 * </pre>
 *
 * @since 0.1.0
 */
public class InMemoryLockService
		implements AsyncLockService, LockOperatorView, LockForceReleaser, LockDirectory, AutoCloseable {

	/** How a cursor of {@link #locks(String, int)} starts; the last key listed follows. */
	private static final String CURSOR = "after:";

	private final Instance instance;

	private final Acquisition acquisition;

	/** An instance on a store of its own, on the system clock. */
	public InMemoryLockService() {
		this(builder());
	}

	/**
	 * An instance on {@code store}, beside the other instances on it.
	 * @param store the store it shares
	 */
	public InMemoryLockService(InMemoryLockStore store) {
		this(builder(store));
	}

	/**
	 * An instance as the builder describes it.
	 * @param builder the settings
	 */
	protected InMemoryLockService(InMemoryLockServiceBuilder builder) {
		this.instance = builder.instance();
		this.acquisition = new Acquisition(this.instance);
		this.instance.store.register(this.instance);
	}

	/**
	 * Start building an instance on a new store of its own, on the system clock unless
	 * {@link InMemoryLockServiceBuilder#clock(LockClock)} says otherwise.
	 * @return a builder with the defaults
	 */
	public static InMemoryLockServiceBuilder builder() {
		return new InMemoryLockServiceBuilder(null);
	}

	/**
	 * Start building an instance on {@code store}, shared with its other instances.
	 * @param store the store
	 * @return a builder with the defaults
	 */
	public static InMemoryLockServiceBuilder builder(InMemoryLockStore store) {
		Assert.notNull(store, "'store' must not be null");
		return new InMemoryLockServiceBuilder(store);
	}

	/** {@return the store this instance keeps its leases in, with the test's orders and the history} */
	public InMemoryLockStore store() {
		return this.instance.store;
	}

	/** {@return the clock of this instance's store} */
	public LockClock clock() {
		return this.instance.store.clock();
	}

	/**
	 * {@inheritDoc} On a {@link ManualLockClock}, a wait ends when the key is handed over or the test advances the
	 * clock past its deadline.
	 */
	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		Assert.notNull(request, "'request' must not be null");
		checkOpen(request);
		RuntimeException refused = refusal(request, LockOwner.current());
		if (refused != null) {
			throw refused;
		}
		this.instance.noteName(request.effectiveName());
		return this.acquisition.tryAcquire(request);
	}

	/**
	 * {@inheritDoc} No thread waits: the store completes the future when it hands the key over or the wait ends, on
	 * one of the engine's callback threads.
	 */
	@Override
	public CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner) {
		Assert.notNull(request, "'request' must not be null");
		Assert.notNull(owner, "'owner' must not be null for lock '" + request.key() + "'");
		try {
			checkOpen(request);
		}
		catch (IllegalStateException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		RuntimeException refused = refusal(request, owner);
		if (refused != null) {
			return CompletableFuture.failedFuture(refused);
		}
		this.instance.noteName(request.effectiveName());
		return this.acquisition.tryAcquireAsync(request, owner);
	}

	/** {@inheritDoc} A call to the store: it counts for {@link InMemoryLockStore#failNextCalls(int)}. */
	@Override
	public Optional<LockHolder> holder(String key) {
		LockSettings.checkKey(key, "'key'");
		InMemoryLockStore store = this.instance.store;
		return store.call((effects) -> {
			Outage.Call call = store.outage.call();
			if (call != Outage.Call.ANSWERED) {
				throw Outage.failure(key, "ask who holds", call, "");
			}
			KeyState keyState = store.table.existing(key);
			if (keyState == null || keyState.holds.isEmpty()) {
				return Optional.empty();
			}
			return Optional.of(new LockHolder(key, keyState.holdCount(), keyState.remaining(store.clock().now()),
					keyState.token, keyState.labels()));
		});
	}

	/**
	 * {@inheritDoc} The holders lose their leases as with the Redis engine: each finds out at its next watchdog
	 * renewal or its next call on the lease. A call to the store: it counts for
	 * {@link InMemoryLockStore#failNextCalls(int)}.
	 */
	@Override
	public Optional<ForcedRelease> forceRelease(String key) {
		LockSettings.checkKey(key, "'key'");
		InMemoryLockStore store = this.instance.store;
		return store.call((effects) -> {
			Outage.Call call = store.outage.call();
			if (call != Outage.Call.ANSWERED) {
				throw Outage.failure(key, "force-release", call, "");
			}
			KeyState keyState = store.table.existing(key);
			if (keyState == null || keyState.holds.isEmpty()) {
				return Optional.empty();
			}
			Instant now = store.clock().now();
			StoreHold writer = keyState.writer();
			List<String> owners = new ArrayList<>();
			if (writer != null) {
				owners.add(writer.owner); // a write lock names its writer first, then a reader it downgraded to
			}
			List<StoreHold> holds = List.copyOf(keyState.holds);
			holds.stream().filter((hold) -> hold != writer).forEach((hold) -> owners.add(hold.owner));
			List<String> labels = new ArrayList<>();
			for (String owner : owners) {
				holds.stream()
					.filter((hold) -> hold.owner.equals(owner) && hold.label != null)
					.findFirst()
					.ifPresent((hold) -> labels.add(hold.label));
			}
			ForcedRelease released = new ForcedRelease(key, owners.get(0), keyState.holdCount(), keyState.token, owners,
					labels);
			for (StoreHold hold : holds) {
				store.table.drop(hold);
				store.history.record(now, key, LockHistory.Kind.FORCE_RELEASED, hold.instance, hold.owner, hold.mode,
						hold.token, Duration.between(hold.since, now), "by " + this.instance.clientId);
			}
			store.handOn(key, now, effects);
			return Optional.of(released);
		});
	}

	/**
	 * {@inheritDoc} In key order; the cursor is the last key a page listed, so a key taken after its place was passed
	 * is not listed. A call to the store: it counts for {@link InMemoryLockStore#failNextCalls(int)}.
	 */
	@Override
	public LockPage locks(@Nullable String cursor, int pageSize) {
		if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
			throw new IllegalArgumentException("'pageSize' must be 1 to " + MAX_PAGE_SIZE + ", not " + pageSize);
		}
		if (cursor != null && !cursor.startsWith(CURSOR)) {
			throw new IllegalArgumentException("'cursor' " + LogSafe.escape(cursor)
					+ " is not one a page of this listing returned (start again without a cursor)");
		}
		String after = (cursor != null) ? cursor.substring(CURSOR.length()) : null;
		InMemoryLockStore store = this.instance.store;
		return store.call((effects) -> {
			Outage.Call call = store.outage.call();
			if (call != Outage.Call.ANSWERED) {
				throw Outage.failure("*", "list every", call, "");
			}
			Instant now = store.clock().now();
			List<KeyState> held = store.table.keys().stream()
				.filter((keyState) -> !keyState.holds.isEmpty() && (after == null || keyState.key.compareTo(after) > 0))
				.sorted(Comparator.comparing((KeyState keyState) -> keyState.key))
				.limit(pageSize + 1L)
				.toList();
			List<StoredLock> page = held.stream().limit(pageSize).map((keyState) -> keyState.stored(now)).toList();
			return new LockPage(page, (held.size() > pageSize) ? CURSOR + page.get(page.size() - 1).key() : null);
		});
	}

	/** {@inheritDoc} Oldest first. */
	@Override
	public List<LeaseSnapshot> activeLeases() {
		return read(() -> this.instance.snapshots(this.instance.store.clock().now()));
	}

	@Override
	public int activeLeaseCount() {
		return read(() -> this.instance.count(false));
	}

	@Override
	public int lostLeaseCount() {
		return read(() -> this.instance.count(true));
	}

	/** {@inheritDoc} Threads and asynchronous acquisitions alike, as with the Redis engine. */
	@Override
	public int waitingThreads() {
		return read(this.instance::waitingCount);
	}

	/** {@inheritDoc} The fair waiters of every instance on the store; -1 while the store is unreachable. */
	@Override
	public long fairQueueLength(String key) {
		LockSettings.checkKey(key, "'key'");
		InMemoryLockStore store = this.instance.store;
		return read(() -> {
			if (!store.outage.isReachable()) {
				return -1L;
			}
			KeyState keyState = store.table.existing(key);
			return (keyState != null) ? (long) keyState.fairQueueLength(store.clock().now()) : 0L;
		});
	}

	@Override
	public LockActivity activityByName() {
		return read(this.instance::activity);
	}

	/** {@inheritDoc} The action runs on the thread that uses a new name first. */
	@Override
	public void onLockName(Consumer<String> action) {
		Assert.notNull(action, "'action' must not be null");
		this.instance.onLockName(action);
	}

	/**
	 * {@inheritDoc} Healthy unless the store is {@linkplain InMemoryLockStore#makeUnreachable() unreachable}: then
	 * every renewed lease whose renewal fell due since is failing.
	 */
	@Override
	public RenewalStatus renewalStatus() {
		return read(this.instance::renewalStatus);
	}

	@Override
	public String clientId() {
		return this.instance.clientId;
	}

	/**
	 * Stop as a crashed instance stops: the leases still held are not released (other instances could otherwise enter
	 * while their holders still run) nor renewed any more, so they expire at their lease time, as with the Redis
	 * engine. Their holders may still release them. Acquiring on a closed instance fails.
	 */
	@Override
	public void close() {
		read(() -> {
			this.instance.closed = true;
			return null;
		});
		this.instance.store.unregister(this.instance);
	}

	/** {@return whether {@link #close()} was called} */
	public boolean isClosed() {
		return read(() -> this.instance.closed);
	}

	@Override
	public String toString() {
		return "InMemoryLockService[clientId=" + this.instance.clientId + ", " + this.instance.store + "]";
	}

	private <T> T read(Supplier<T> reading) {
		return this.instance.store.call((effects) -> reading.get());
	}

	private void checkOpen(LockRequest request) {
		if (isClosed()) {
			throw new IllegalStateException("Lock service is closed; cannot acquire '" + request.key() + "'");
		}
	}

	/**
	 * What the engine refuses before any call to the store, as the Redis engine refuses it: an upgrade (a reader of the
	 * key asking for its write lock, which would wait for its own read lock for ever), and a holder's re-entry of its
	 * permit with another number of permits (which would otherwise re-enter without the store seeing the number).
	 */
	private @Nullable RuntimeException refusal(LockRequest request, LockOwner owner) {
		if (request.mode() == LockMode.PERMITS) {
			return read(() -> {
				LeaseEntry held = this.instance.heldBy(request.key(), owner, LockMode.PERMITS);
				return (held != null && held.permits != request.permits())
						? KeyState.refusedPermits(request.key(), request.permits(), held.permits) : null;
			});
		}
		if (request.mode() != LockMode.WRITE) {
			return null;
		}
		boolean upgrade = read(() -> this.instance.heldBy(request.key(), owner, LockMode.READ) != null
				&& this.instance.heldBy(request.key(), owner, LockMode.WRITE) == null);
		return upgrade ? new IllegalStateException(owner + " holds the read lock of '" + request.key()
				+ "' and asked for its write lock: upgrading would deadlock; release the read lock first") : null;
	}

}
