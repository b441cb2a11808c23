package dev.distlock.observability;

import java.util.Optional;
import java.util.function.Supplier;

import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
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
 *
 * @since 0.1.0
 */
public class ObservedLockService implements LockService {

	private final LockService delegate;

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

	@Override
	public String toString() {
		return "ObservedLockService[" + this.delegate + "]";
	}

}
