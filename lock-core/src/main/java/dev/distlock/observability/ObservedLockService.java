package dev.distlock.observability;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * A {@link LockService} that observes every acquisition of the service it wraps as a
 * {@link LockObservationDocumentation#ACQUISITION distlock.acquisition} observation: a span in a trace, a timer in
 * the meters. It wraps any engine, so locks taken programmatically are observed exactly as those of
 * {@code @DistributedLock} methods, which acquire through it too.
 * <p>
 * Only {@link #tryAcquire(LockRequest)} goes to the delegate; {@code acquire}, {@code execute} and {@code run} are
 * the interface's defaults on top of it, so each acquisition is observed once whichever method asked for it. What the
 * delegate offers beyond {@code LockService} (an engine's operator methods) stays on the delegate: this class is not a
 * {@link dev.distlock.core.LockOperatorView}, so the operator views find the engine bean, never its wrapper.
 * <p>
 * It is an {@link AsyncLockService} too: an asynchronous acquisition goes to the delegate's own when the delegate is
 * one, else to the delegate {@linkplain AsyncLockService#adapt adapted} with an executor (the one given, or a pool of
 * daemon threads made on first use), and is observed from the call until its future completes.
 *
 * @since 0.1.0
 */
public class ObservedLockService implements AsyncLockService {

	private final LockService delegate;

	/** The delegate's asynchronous view, made on first use (guarded by {@code this}). */
	private @Nullable AsyncLockService asyncDelegate;

	/** Where a delegate that is not asynchronous runs its blocking acquisitions; null until needed when not given. */
	private @Nullable Executor asyncExecutor;

	private final Supplier<ObservationRegistry> observationRegistry;

	private volatile @Nullable LockAcquisitionObservationConvention convention;

	/**
	 * Observe {@code delegate}'s acquisitions in {@code observationRegistry}.
	 * @param delegate the engine that acquires
	 * @param observationRegistry where the acquisitions are observed
	 */
	public ObservedLockService(LockService delegate, ObservationRegistry observationRegistry) {
		this(delegate, supplierOf(observationRegistry));
	}

	/**
	 * Observe {@code delegate}'s acquisitions in the registry {@code observationRegistry} supplies, asked for at each
	 * acquisition, so that the registry can be looked up once it is ready rather than when this service is made.
	 * @param delegate the engine that acquires
	 * @param observationRegistry supplies the registry where the acquisitions are observed
	 */
	public ObservedLockService(LockService delegate, Supplier<ObservationRegistry> observationRegistry) {
		Assert.notNull(delegate, "'delegate' must not be null");
		Assert.notNull(observationRegistry, "'observationRegistry' must not be null");
		this.delegate = delegate;
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Observe {@code delegate}'s acquisitions, running the asynchronous ones of a delegate that is not an
	 * {@link AsyncLockService} on {@code asyncExecutor}.
	 * @param delegate the engine that acquires
	 * @param observationRegistry supplies the registry where the acquisitions are observed
	 * @param asyncExecutor where a blocking delegate's asynchronous acquisitions wait: one thread per waiting one
	 * @since 0.6.0
	 */
	public ObservedLockService(LockService delegate, Supplier<ObservationRegistry> observationRegistry,
			Executor asyncExecutor) {
		this(delegate, observationRegistry);
		Assert.notNull(asyncExecutor, "'asyncExecutor' must not be null");
		this.asyncExecutor = asyncExecutor;
	}

	private static Supplier<ObservationRegistry> supplierOf(ObservationRegistry observationRegistry) {
		Assert.notNull(observationRegistry, "'observationRegistry' must not be null");
		return () -> observationRegistry;
	}

	/**
	 * Name and tag acquisitions with this convention instead of {@link DefaultLockAcquisitionObservationConvention}.
	 * @param convention the convention, or {@code null} for the default
	 */
	public void setObservationConvention(@Nullable LockAcquisitionObservationConvention convention) {
		this.convention = convention;
	}

	/**
	 * The service whose acquisitions this one observes.
	 * @return the delegate
	 */
	public LockService getDelegate() {
		return this.delegate;
	}

	@Override
	public Optional<LockHolder> holder(String key) {
		// not observed: a query changes nothing
		return this.delegate.holder(key);
	}

	@Override
	public Duration shortestRenewableTtl() {
		return this.delegate.shortestRenewableTtl();
	}

	@Override
	public Optional<String> modeRefusal(LockMode mode) {
		return this.delegate.modeRefusal(mode);
	}

	@Override
	public boolean isLocked(String key) {
		return this.delegate.isLocked(key);
	}

	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		Assert.notNull(request, "'request' must not be null");
		ObservationRegistry registry = this.observationRegistry.get();
		if (registry.isNoop()) {
			return this.delegate.tryAcquire(request);
		}
		LockAcquisitionContext context = new LockAcquisitionContext(request.effectiveName(), request.key(), request.waitTime());
		Observation observation = LockObservationDocumentation.ACQUISITION.observation(this.convention,
				DefaultLockAcquisitionObservationConvention.INSTANCE, () -> context, registry).start();
		try (Observation.Scope scope = observation.openScope()) {
			Optional<Lease> lease = this.delegate.tryAcquire(request);
			context.setLease(lease.orElse(null));
			context.setOutcome(lease.isPresent() ? AcquisitionOutcome.ACQUIRED : AcquisitionOutcome.TIMED_OUT);
			return lease;
		}
		catch (RuntimeException | Error ex) {
			context.setOutcome(AcquisitionOutcome.FAILED);
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

	/**
	 * {@inheritDoc} Observed as {@link #tryAcquire(LockRequest)} is, from this call until the delegate's acquisition
	 * completes (a cancelled one counts as failed); the observation's scope is open while the delegate starts it.
	 */
	@Override
	public CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner) {
		Assert.notNull(request, "'request' must not be null");
		Assert.notNull(owner, "'owner' must not be null for lock '" + request.key() + "'");
		AsyncLockService async = asyncDelegate();
		ObservationRegistry registry = this.observationRegistry.get();
		if (registry.isNoop()) {
			return async.tryAcquireAsync(request, owner);
		}
		LockAcquisitionContext context = new LockAcquisitionContext(request.effectiveName(), request.key(), request.waitTime());
		Observation observation = LockObservationDocumentation.ACQUISITION.observation(this.convention,
				DefaultLockAcquisitionObservationConvention.INSTANCE, () -> context, registry).start();
		CompletableFuture<Optional<Lease>> attempt;
		try (Observation.Scope scope = observation.openScope()) {
			attempt = async.tryAcquireAsync(request, owner);
		}
		catch (RuntimeException | Error ex) {
			context.setOutcome(AcquisitionOutcome.FAILED);
			observation.error(ex);
			observation.stop();
			throw ex;
		}
		// Invariant: a lease the delegate grants is delivered through result or, when result was cancelled first,
		// released here; the observation stops once, when the delegate's acquisition completes.
		CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
		attempt.whenComplete((lease, failure) -> {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (cause != null) {
				context.setOutcome(AcquisitionOutcome.FAILED);
				observation.error(cause);
				observation.stop();
				result.completeExceptionally(cause);
				return;
			}
			context.setLease(lease.orElse(null));
			context.setOutcome(lease.isPresent() ? AcquisitionOutcome.ACQUIRED : AcquisitionOutcome.TIMED_OUT);
			observation.stop();
			if (!result.complete(lease)) {
				lease.ifPresent(Lease::close); // cancelled as it was acquired: nobody else will release it
			}
		});
		// cancelling what the caller holds abandons the delegate's acquisition (which releases a lease it got)
		result.whenComplete((lease, failure) -> {
			if (result.isCancelled()) {
				attempt.cancel(false);
			}
		});
		return result;
	}

	private synchronized AsyncLockService asyncDelegate() {
		AsyncLockService async = this.asyncDelegate;
		if (async == null) {
			if (this.delegate instanceof AsyncLockService own) {
				async = own;
			}
			else {
				Executor executor = this.asyncExecutor;
				if (executor == null) {
					executor = defaultExecutor();
					this.asyncExecutor = executor;
				}
				async = AsyncLockService.adapt(this.delegate, executor);
			}
			this.asyncDelegate = async;
		}
		return async;
	}

	/**
	 * Daemon threads that stop after a minute idle, as many as acquisitions wait at once: the adapter occupies one per
	 * waiting acquisition.
	 */
	private static ExecutorService defaultExecutor() {
		AtomicInteger count = new AtomicInteger();
		return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
				task -> {
					Thread thread = new Thread(task, "distlock-async-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
	}

	@Override
	public String toString() {
		return "ObservedLockService[" + this.delegate + "]";
	}

}
