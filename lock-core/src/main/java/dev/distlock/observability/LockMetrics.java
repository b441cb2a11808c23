package dev.distlock.observability;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockListener.Abandonment;
import dev.distlock.core.LockListener.Notification;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Records what happens to leases as Micrometer meters, each tagged with the lock's {@code name} (the annotation's
 * name, or {@code Class.method}), never with its key: keys are unbounded, names are not, so the number of meters
 * does not grow with the number of keys.
 * <p>
 * Meters of a name are created together the first time the name is seen, so that counters exist (at zero) before
 * anything happens and rates can be computed from the start. The gauges of a service's leases and waiters, tagged by
 * the same name, are bound by {@link LockServiceMetrics}.
 *
 * @since 0.1.0
 */
public class LockMetrics implements LockListener {

	/** Timer: how long acquisitions waited, tagged {@code name} and {@code outcome} (acquired, timed-out, failed). */
	public static final String ACQUIRE = "distlock.acquire";

	/** Timer: how long holds were held, from acquisition to release, tagged {@code name}. */
	public static final String HELD = "distlock.held";

	/** Counter: watchdog renewals, tagged {@code name} and {@code outcome} (success, failure). */
	public static final String RENEWALS = "distlock.renewals";

	/** Counter: leases found lost before their release, tagged {@code name} and {@code detection}. */
	public static final String LOST = "distlock.leases.lost";

	/** Counter: releases that found the lease gone from the store, tagged {@code name}. */
	public static final String RELEASES_GONE = "distlock.releases.gone";

	/**
	 * Counter: release notifications the store refused (a missing channel permission), tagged {@code operation}
	 * (subscribe, publish); not by lock name, as a channel is one key's.
	 */
	public static final String NOTIFICATIONS_REFUSED = "distlock.notifications.refused";

	/**
	 * Counter: deletes of holds Redis may have unknown to the engine (left by calls whose replies were lost) that the
	 * engine gave up, tagged {@code reason} ({@code refused}, {@code expired}, {@code too-many}); not by lock name, as
	 * the engine knows only the key then.
	 */
	public static final String DISCARDS_ABANDONED = "distlock.discards.abandoned";

	/**
	 * Gauge: the number of permits of the name's semaphore ({@link LockMode#PERMITS}), as its latest request on this
	 * instance asked, tagged {@code name}; registered at the name's first permits request, so names of plain locks have
	 * none. Beside {@code distlock.leases.held} summed over the instances (the permits in use across the fleet) it
	 * tells how close a semaphore is to its limit. A name whose keys are semaphores of different sizes shows the latest.
	 * @since 0.8.0
	 */
	public static final String PERMITS_LIMIT = "distlock.permits.limit";

	/** The tag that names the lock. */
	public static final String NAME_TAG = "name";

	private final MeterRegistry registry;

	private final Map<String, NameMeters> meters = new ConcurrentHashMap<>();

	private final Map<Notification, Counter> notificationsRefused = new EnumMap<>(Notification.class);

	private final Map<Abandonment, Counter> discardsAbandoned = new EnumMap<>(Abandonment.class);

	/** Per name of a semaphore, the value of its {@link #PERMITS_LIMIT} gauge, which holds it strongly. */
	private final Map<String, AtomicInteger> permitLimits = new ConcurrentHashMap<>();

	/**
	 * A listener that records into {@code registry}.
	 * @param registry where the meters are registered
	 */
	public LockMetrics(MeterRegistry registry) {
		Assert.notNull(registry, "'registry' must not be null");
		this.registry = registry;
		for (Notification operation : Notification.values()) {
			this.notificationsRefused.put(operation, Counter.builder(NOTIFICATIONS_REFUSED)
				.description("Release notifications the store refused: waiters poll, releases are not announced")
				.tag("operation", operation.name().toLowerCase(Locale.ROOT))
				.register(registry));
		}
		for (Abandonment reason : Abandonment.values()) {
			this.discardsAbandoned.put(reason, Counter.builder(DISCARDS_ABANDONED)
				.description("Deletes of holds Redis may have unknown to the engine that it gave up")
				.tag("reason", reason.name().toLowerCase(Locale.ROOT).replace('_', '-'))
				.register(registry));
		}
	}

	@Override
	public void acquired(LockRequest request, Lease lease, Duration waited) {
		meters(request.effectiveName()).acquire.get(AcquisitionOutcome.ACQUIRED).record(waited);
		recordPermits(request);
	}

	@Override
	public void notAcquired(LockRequest request, Duration waited, @Nullable RuntimeException failure) {
		AcquisitionOutcome outcome = (failure != null) ? AcquisitionOutcome.FAILED : AcquisitionOutcome.TIMED_OUT;
		meters(request.effectiveName()).acquire.get(outcome).record(waited);
		if (failure == null) {
			// a request refused for another number of permits than the holders' fails: its number is not the limit
			recordPermits(request);
		}
	}

	/**
	 * A semaphore's size, from its requests that were granted or timed out: the store admits or queues a request
	 * only when it asks for the holders' number of permits.
	 */
	private void recordPermits(LockRequest request) {
		if (request.mode() != LockMode.PERMITS) {
			return;
		}
		String name = request.effectiveName();
		AtomicInteger limit = this.permitLimits.get(name);
		if (limit == null) {
			limit = this.permitLimits.computeIfAbsent(name, (n) -> {
				AtomicInteger value = new AtomicInteger();
				Gauge.builder(PERMITS_LIMIT, value, AtomicInteger::get)
					.description("Permits of the semaphore, as its latest request asked")
					.tag(NAME_TAG, n)
					.strongReference(true)
					.register(this.registry);
				return value;
			});
		}
		limit.set(request.permits());
	}

	@Override
	public void released(Lease lease, Duration held, boolean wasOwned) {
		NameMeters meters = meters(lease.name());
		meters.held.record(held);
		// not owned and lost: the lease was gone; not owned and not lost: Redis could not be reached to release it
		if (!wasOwned && lease.isLost()) {
			meters.releasesGone.increment();
		}
	}

	@Override
	public void renewed(String name, boolean success) {
		NameMeters meters = meters(name);
		(success ? meters.renewalsSucceeded : meters.renewalsFailed).increment();
	}

	@Override
	public void lost(LockLostEvent event) {
		meters(event.name()).lost.get(event.detection()).increment();
	}

	@Override
	public void notificationRefused(Notification operation, String channel, String reason) {
		this.notificationsRefused.get(operation).increment();
	}

	@Override
	public void discardAbandoned(String key, Abandonment reason, String detail) {
		this.discardsAbandoned.get(reason).increment();
	}

	private NameMeters meters(String name) {
		NameMeters meters = this.meters.get(name);
		return (meters != null) ? meters : this.meters.computeIfAbsent(name, n -> new NameMeters(this.registry, n));
	}

	/**
	 * The tag value of a loss detection: {@code renewal-found-gone}, {@code renewal-failed}, ...
	 * @param detection how the loss was noticed
	 * @return the detection's name in lower case, words joined by '-'
	 */
	public static String detectionTag(LockLostEvent.Detection detection) {
		return detection.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	private static final class NameMeters {

		final Map<AcquisitionOutcome, Timer> acquire = new EnumMap<>(AcquisitionOutcome.class);

		final Timer held;

		final Counter renewalsSucceeded;

		final Counter renewalsFailed;

		final Map<LockLostEvent.Detection, Counter> lost = new EnumMap<>(LockLostEvent.Detection.class);

		final Counter releasesGone;

		NameMeters(MeterRegistry registry, String name) {
			for (AcquisitionOutcome outcome : AcquisitionOutcome.values()) {
				this.acquire.put(outcome, Timer.builder(ACQUIRE)
					.description("Time spent acquiring a lock, by how the acquisition ended")
					.tag(NAME_TAG, name)
					.tag("outcome", outcome.value())
					.publishPercentileHistogram()
					.minimumExpectedValue(Duration.ofMillis(1))
					.maximumExpectedValue(Duration.ofMinutes(1))
					.register(registry));
			}
			this.held = Timer.builder(HELD)
				.description("Time a lock was held, from acquisition to release")
				.tag(NAME_TAG, name)
				.register(registry);
			this.renewalsSucceeded = renewals(registry, name, "success");
			this.renewalsFailed = renewals(registry, name, "failure");
			for (LockLostEvent.Detection detection : LockLostEvent.Detection.values()) {
				this.lost.put(detection, Counter.builder(LOST)
					.description("Leases lost before their holder released them, by how the loss was noticed")
					.tag(NAME_TAG, name)
					.tag("detection", detectionTag(detection))
					.register(registry));
			}
			this.releasesGone = Counter.builder(RELEASES_GONE)
				.description("Releases that found the lease gone from Redis")
				.tag(NAME_TAG, name)
				.register(registry);
		}

		private static Counter renewals(MeterRegistry registry, String name, String outcome) {
			return Counter.builder(RENEWALS)
				.description("Watchdog renewals of held leases, by outcome")
				.tag(NAME_TAG, name)
				.tag("outcome", outcome)
				.register(registry);
		}

	}

}
