package dev.distlock.reactive;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockException;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockUnavailableException;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import org.springframework.util.Assert;

/**
 * Locks for reactive code: a lease is acquired when a stream is subscribed, held while it runs and released
 * ({@link Lease#releaseAsync()}) when it completes, fails or is cancelled, without blocking a Reactor thread.
 * <p>
 * Re-entry follows Reactor's {@code Context}, not threads: a locked stream gets a fresh {@link LockOwner} per
 * subscription and writes it into the context of the work it runs, so a locked stream subscribed inside that work
 * (a {@code flatMap} of it) re-enters the lease it holds, while other subscriptions on the same threads wait for it.
 * A lease found lost while held ({@link Lease#onLost}) cancels the work and fails the stream with
 * {@link LockLostException}. Cancelling a subscription that still waits for its lease abandons the wait; a lease
 * granted as the subscription is cancelled, before the work or the caller got it, is released, never left held
 * ({@link LeaseCustody}).
 * <p>
 * The work reads its leases with {@link #currentLease()} and {@link #currentLeases()} (a {@code ThreadLocal} such as
 * {@link dev.distlock.annotation.LockContext} does not follow a reactive stream).
 *
 * @since 0.6.0
 */
public class ReactiveLockService implements AutoCloseable {

	/** How many blocking acquisitions {@link #of(LockService)} lets wait at once. */
	public static final int DEFAULT_MAX_BLOCKING_CALLS = 256;

	private static final String OWNER = ReactiveLockService.class.getName() + ".OWNER";

	private static final String LEASES = ReactiveLockService.class.getName() + ".LEASES";

	private static final String OWNER_DESCRIPTION = ReactiveLockService.class.getName() + ".OWNER_DESCRIPTION";

	/** How a stream's fresh owner is described when nothing says what it runs. */
	private static final String REACTIVE = "reactive";

	private static final Consumer<Lease> NO_SEAM = (lease) -> {
	};

	private final AsyncLockService service;

	private final @Nullable BlockingCallThreads threads;

	/** Runs with each granted lease before it is handed over: a seam for tests, a no-op otherwise. */
	private final Consumer<Lease> granted;

	/** What a locked stream does with its leases: watch for their loss, release them. */
	private final ReactiveLeases releases = new ReactiveLeases(this::release);

	/**
	 * Reactive locks on an engine that acquires without blocking (or on one adapted with
	 * {@link AsyncLockService#adapt}).
	 * @param service the engine
	 */
	public ReactiveLockService(AsyncLockService service) {
		this(service, null, NO_SEAM);
	}

	/**
	 * Reactive locks that run {@code granted} with each lease the engine grants, before it is handed over to the work
	 * or the caller: tests cancel there to land exactly between a grant and its hand-off.
	 */
	ReactiveLockService(AsyncLockService service, Consumer<Lease> granted) {
		this(service, null, granted);
	}

	private ReactiveLockService(AsyncLockService service, @Nullable BlockingCallThreads threads,
			Consumer<Lease> granted) {
		Assert.notNull(service, "'service' must not be null");
		this.service = service;
		this.threads = threads;
		this.granted = granted;
	}

	/**
	 * Reactive locks on {@code service}: on itself when it acquires asynchronously already, else on
	 * {@link AsyncLockService#adapt adapted} blocking calls, each on a thread of its own (never a Reactor thread), at
	 * most {@link #DEFAULT_MAX_BLOCKING_CALLS} at once.
	 * @param service the engine
	 * @return the reactive view; {@link #close() close} it to stop the threads of blocking calls
	 */
	public static ReactiveLockService of(LockService service) {
		return of(service, DEFAULT_MAX_BLOCKING_CALLS);
	}

	/**
	 * {@link #of(LockService)} with another bound on the blocking calls that may run at once: an acquisition beyond it
	 * fails with {@link LockUnavailableException} instead of queueing, as each waiting one occupies a thread.
	 * @param service the engine
	 * @param maxBlockingCalls how many blocking acquisitions and releases may run at once; at least 1
	 * @return the reactive view; {@link #close() close} it to stop the threads of blocking calls
	 */
	public static ReactiveLockService of(LockService service, int maxBlockingCalls) {
		Assert.notNull(service, "'service' must not be null");
		Assert.isTrue(maxBlockingCalls > 0, "'maxBlockingCalls' must be at least 1");
		if (service instanceof AsyncLockService async) {
			return new ReactiveLockService(async);
		}
		BlockingCallThreads threads = new BlockingCallThreads(maxBlockingCalls);
		return new ReactiveLockService(AsyncLockService.adapt(service, threads), threads, NO_SEAM);
	}

	/** {@return the engine this view acquires from} */
	public AsyncLockService getLockService() {
		return this.service;
	}

	/**
	 * Try to acquire {@code request.key()} when subscribed, for the owner of the subscriber's context (a fresh one
	 * outside a locked stream). The caller releases the lease ({@link #release(Lease)}).
	 * @param request the key, lease time, wait and renewal of the lease
	 * @return the lease, or empty when the key was not free within the wait
	 */
	public Mono<Optional<Lease>> tryAcquire(LockRequest request) {
		Assert.notNull(request, "'request' must not be null");
		return Mono.deferContextual((context) -> handedOver(request, ownerOf(context)).map(Optional::of)
			.onErrorResume(LockAcquisitionTimeoutException.class, (ex) -> Mono.just(Optional.empty())));
	}

	/**
	 * Acquire as {@link #tryAcquire(LockRequest)} does, failing with {@link LockAcquisitionTimeoutException} when the
	 * key was not free within the wait. The caller releases the lease ({@link #release(Lease)}).
	 * @param request the key, lease time, wait and renewal of the lease
	 * @return the lease
	 */
	public Mono<Lease> acquire(LockRequest request) {
		Assert.notNull(request, "'request' must not be null");
		return Mono.deferContextual((context) -> handedOver(request, ownerOf(context)));
	}

	/**
	 * Release a lease without blocking.
	 * @param lease a lease from {@link #acquire(LockRequest)} or {@link #tryAcquire(LockRequest)}
	 * @return completes once released; fails as {@link Lease#release()} would throw
	 */
	public Mono<Void> release(Lease lease) {
		return Mono.fromFuture(lease::releaseAsync, true).onErrorMap(CompletionException.class,
				(ex) -> (ex.getCause() != null) ? ex.getCause() : ex);
	}

	/**
	 * Run {@code work} under the lock, per subscription: acquire, subscribe to the work with the lease in its context,
	 * release when it completes (the value is emitted once released), fails or is cancelled.
	 * @param <T> the work's value type
	 * @param request the key, lease time, wait and renewal of the lease
	 * @param work the work to run while holding the lease
	 * @return the work's value; fails with {@link LockAcquisitionTimeoutException} when the key was not free within
	 * the wait, with {@link LockLostException} when the lease was lost while the work ran or when it was released
	 */
	public <T> Mono<T> withLock(LockRequest request, Function<Lease, ? extends Mono<T>> work) {
		Assert.notNull(request, "'request' must not be null");
		Assert.notNull(work, "'work' must not be null");
		return withLocks(List.of(request), (leases) -> work.apply(leases.get(0)), null);
	}

	/**
	 * {@link #withLock(LockRequest, Function)} for work of many values, emitted while the lease is held.
	 * @param <T> the work's value type
	 * @param request the key, lease time, wait and renewal of the lease
	 * @param work the work to run while holding the lease
	 * @return the work's values; completes once the lease is released
	 */
	public <T> Flux<T> withLockMany(LockRequest request, Function<Lease, ? extends Publisher<T>> work) {
		Assert.notNull(request, "'request' must not be null");
		Assert.notNull(work, "'work' must not be null");
		return withLocksMany(List.of(request), (leases) -> work.apply(leases.get(0)), null);
	}

	/**
	 * {@link #withLock(LockRequest, Function)} on several keys, all or none, acquired in the given order within one
	 * shared wait (the first request's) and released in reverse order.
	 * @param <T> the work's value type
	 * @param requests the leases to hold, at least one; give keys in a fixed order (sorted) to avoid deadlocks
	 * @param work the work to run while holding the leases
	 * @param whenNotAcquired the stream to return instead when a lease could not be acquired, or {@code null} to
	 * fail with the {@link LockException}
	 * @return the work's value
	 */
	public <T> Mono<T> withLocks(List<LockRequest> requests, Function<List<Lease>, ? extends Mono<T>> work,
			@Nullable Function<LockException, ? extends Mono<T>> whenNotAcquired) {
		List<LockRequest> copy = checked(requests);
		Mono<T> locked = Mono.deferContextual((context) -> {
			LockOwner owner = ownerOf(context);
			return Mono.usingWhen(acquireAll(copy, owner), (custody) -> {
				List<Lease> leases = custody.claim();
				if (leases == null) {
					return Mono.empty(); // the subscriber left first: its cancellation releases them
				}
				return ReactiveLeases.untilLost(Mono.defer(() -> work.apply(leases)), leases)
					.contextWrite((inner) -> inner.put(OWNER, owner).put(LEASES, leases));
			}, (custody) -> this.releases.onComplete(custody.end()),
					(custody, ex) -> this.releases.onError(custody.end(), ex),
					(custody) -> this.releases.onCancel(custody.end()));
		});
		return (whenNotAcquired != null) ? locked.onErrorResume(NotAcquired.class,
				(ex) -> whenNotAcquired.apply(ex.failure)) : locked.onErrorMap(NotAcquired.class, (ex) -> ex.failure);
	}

	/**
	 * {@link #withLocks(List, Function, Function)} for work of many values, emitted while the leases are held.
	 * @param <T> the work's value type
	 * @param requests the leases to hold, at least one; give keys in a fixed order (sorted) to avoid deadlocks
	 * @param work the work to run while holding the leases
	 * @param whenNotAcquired the stream to return instead when a lease could not be acquired, or {@code null} to
	 * fail with the {@link LockException}
	 * @return the work's values; completes once the leases are released
	 */
	public <T> Flux<T> withLocksMany(List<LockRequest> requests, Function<List<Lease>, ? extends Publisher<T>> work,
			@Nullable Function<LockException, ? extends Publisher<T>> whenNotAcquired) {
		List<LockRequest> copy = checked(requests);
		Flux<T> locked = Flux.deferContextual((context) -> {
			LockOwner owner = ownerOf(context);
			return Flux.usingWhen(acquireAll(copy, owner), (custody) -> {
				List<Lease> leases = custody.claim();
				if (leases == null) {
					return Flux.empty(); // the subscriber left first: its cancellation releases them
				}
				return ReactiveLeases.untilLost(Flux.defer(() -> work.apply(leases)), leases)
					.contextWrite((inner) -> inner.put(OWNER, owner).put(LEASES, leases));
			}, (custody) -> this.releases.onComplete(custody.end()),
					(custody, ex) -> this.releases.onError(custody.end(), ex),
					(custody) -> this.releases.onCancel(custody.end()));
		});
		return (whenNotAcquired != null) ? locked.onErrorResume(NotAcquired.class,
				(ex) -> whenNotAcquired.apply(ex.failure)) : locked.onErrorMap(NotAcquired.class, (ex) -> ex.failure);
	}

	/**
	 * The lease of the innermost locked stream whose work subscribed this one (its first, if it holds several).
	 * @return the lease, or empty outside locked work
	 */
	public static Mono<Lease> currentLease() {
		return currentLeases().mapNotNull((leases) -> leases.isEmpty() ? null : leases.get(0));
	}

	/**
	 * All leases of the innermost locked stream whose work subscribed this one, in acquisition order.
	 * @return the leases, empty (the list) outside locked work
	 */
	public static Mono<List<Lease>> currentLeases() {
		return Mono.deferContextual((context) -> Mono.just(context.<List<Lease>>getOrDefault(LEASES, List.of())));
	}

	/**
	 * The owner locked streams subscribed in this context acquire for: the one of the enclosing locked work, or empty
	 * outside it (each subscription then takes a fresh owner).
	 * @return the owner, or empty
	 */
	public static Mono<LockOwner> currentOwner() {
		return Mono.deferContextual((context) -> Mono.justOrEmpty(context.<LockOwner>getOrEmpty(OWNER)));
	}

	/**
	 * Describe the fresh owner that locked streams subscribed with this context take (when no enclosing locked work
	 * gives them its own) for the {@link dev.distlock.core.HolderLabel} of their leases, which log lines and exception
	 * messages name the holder by: for example {@code reactive InventoryService.reserve}. Without it the owner is
	 * described as {@code reactive}. Apply it to the locked stream with {@code contextWrite}.
	 * @param description what the stream's owner is, in a few words; not blank
	 * @return the change to a subscriber's context
	 * @since 0.7.0
	 */
	public static Function<Context, Context> describingOwners(String description) {
		Assert.hasText(description, "'description' must not be blank");
		return (context) -> context.put(OWNER_DESCRIPTION, description);
	}

	/**
	 * Refuse further blocking calls, if this view makes any ({@link #of(LockService)}); those running end on their
	 * own, within their requests' waits.
	 */
	@Override
	public void close() {
		if (this.threads != null) {
			this.threads.close();
		}
	}

	private static LockOwner ownerOf(ContextView context) {
		return context.<LockOwner>getOrEmpty(OWNER)
			.orElseGet(() -> LockOwner.newOwner(context.getOrDefault(OWNER_DESCRIPTION, REACTIVE)));
	}

	private static List<LockRequest> checked(List<LockRequest> requests) {
		Assert.notEmpty(requests, "'requests' must not be empty");
		Assert.noNullElements(requests, "'requests' must not contain null");
		return List.copyOf(requests);
	}

	/**
	 * The leases of {@code requests}, in order, within the first one's wait, in the custody this emits for the work to
	 * claim; on a failure, or a cancellation before the work claimed them, those acquired so far are released.
	 * Failures are {@link NotAcquired} when they are the engine's {@link LockException}.
	 */
	private Mono<LeaseCustody> acquireAll(List<LockRequest> requests, LockOwner owner) {
		return Mono.defer(() -> {
			LeaseCustody custody = new LeaseCustody();
			LockRequest first = requests.get(0);
			long deadline = System.nanoTime() + first.waitTime().toNanos();
			return Flux.fromIterable(requests).concatMap((request) -> {
				if (request == first) {
					return acquireOne(request, owner, custody);
				}
				Duration remaining = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
				return acquireOne(new LockRequest(request.key(), request.ttl(), remaining, request.autoRenew(),
						request.name(), request.mode(), request.maxHold(), request.permits()), owner, custody).onErrorMap(LockAcquisitionTimeoutException.class,
								(ex) -> new LockAcquisitionTimeoutException(request.key(), first.waitTime()));
			}, 0)
				.then(Mono.just(custody))
				.onErrorResume((ex) -> this.releases.quietly(custody.abandon(), ex).then(Mono.error(ex)))
				.doOnCancel(() -> this.releases.onCancel(custody.abandon()).subscribe())
				.onErrorMap(LockException.class, NotAcquired::new);
		});
	}

	/**
	 * One lease for a caller who releases it: it leaves the custody when it reaches the caller, and is released when
	 * the caller left before it did.
	 */
	private Mono<Lease> handedOver(LockRequest request, LockOwner owner) {
		return Mono.defer(() -> {
			LeaseCustody custody = new LeaseCustody();
			return acquireOne(request, owner, custody).filter((lease) -> custody.claim() != null)
				.doOnCancel(() -> this.releases.onCancel(custody.abandon()).subscribe());
		});
	}

	/**
	 * One lease: the engine's future, cancelled when the subscription is, and its lease taken into {@code custody}
	 * before it is emitted. Emitting may still lose it (Reactor drops a value that meets a cancellation); the custody
	 * releases it then, as it releases a lease granted after the custody was abandoned (see {@link LeaseCustody}).
	 */
	private Mono<Lease> acquireOne(LockRequest request, LockOwner owner, LeaseCustody custody) {
		return Mono.create((sink) -> {
			CompletableFuture<Optional<Lease>> future = this.service.tryAcquireAsync(request, owner);
			// the engine releases a lease it grants after this; one granted just before meets an abandoned custody
			sink.onCancel(() -> future.cancel(true));
			future.whenComplete((lease, failure) -> {
				if (failure != null) {
					sink.error(unwrap(failure));
				}
				else if (lease.isEmpty()) {
					sink.error(new LockAcquisitionTimeoutException(request.key(), request.waitTime()));
				}
				else if (custody.admit(lease.get())) {
					this.granted.accept(lease.get());
					sink.success(lease.get());
				}
				else {
					ReactiveLeases.detached(lease.get());
				}
			});
		});
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/** An acquisition failure, told apart from the work's own failures (which never go to 'whenNotAcquired'). */
	private static final class NotAcquired extends RuntimeException {

		private final LockException failure;

		NotAcquired(LockException failure) {
			super(failure.getMessage(), failure, false, false);
			this.failure = failure;
		}

	}

}
