package dev.distlock.observability;

import java.time.Duration;
import java.util.function.ToIntFunction;

import dev.distlock.core.LockActivity;
import dev.distlock.core.LockOperatorView;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Gauges of what an engine is doing right now, per lock name: the leases it holds and the threads waiting for a lock
 * held elsewhere, tagged {@code name} like the meters of {@link LockMetrics} (never the key), so that an operator sees
 * which lock has leases held and waiters piling up. They read the engine's {@link LockOperatorView}, so they work on
 * any engine that offers one.
 * <p>
 * Nothing is counted on the lock's own path: the values are derived at scrape time from the engine's state
 * ({@link LockOperatorView#activityByName()}), in one pass that all the gauges of a scrape share (it is reused for
 * {@link #DEFAULT_MAX_SNAPSHOT_AGE}), instead of one pass per name. The gauges of a name are registered when the
 * engine first sees the name ({@link LockOperatorView#onLockName}), before its first lease or waiting thread, and
 * read 0 when the name has none.
 *
 * @since 0.1.0
 */
public class LockServiceMetrics implements MeterBinder {

	/** Gauge: leases this instance holds now, tagged {@code name}. */
	public static final String LEASES_HELD = "distlock.leases.held";

	/** Gauge: threads of this instance waiting for a lock held elsewhere, tagged {@code name}. */
	public static final String WAITERS = "distlock.waiters";

	/**
	 * How long one snapshot of the service's activity serves the gauges: long enough for every gauge of one scrape,
	 * short against any scrape interval.
	 */
	public static final Duration DEFAULT_MAX_SNAPSHOT_AGE = Duration.ofSeconds(1);

	private final LockOperatorView operatorView;

	private final long maxSnapshotAgeNanos;

	private volatile @Nullable Snapshot snapshot;

	/**
	 * Gauges whose snapshot of the service's activity is reused for at most {@link #DEFAULT_MAX_SNAPSHOT_AGE}.
	 * @param operatorView the engine whose leases and waiting threads are measured
	 */
	public LockServiceMetrics(LockOperatorView operatorView) {
		this(operatorView, DEFAULT_MAX_SNAPSHOT_AGE);
	}

	/**
	 * Gauges whose snapshot of the service's activity is reused for at most {@code maxSnapshotAge}; zero takes one per
	 * gauge read.
	 * @param operatorView the engine whose leases and waiting threads are measured
	 * @param maxSnapshotAge how long a snapshot is reused; not negative
	 */
	public LockServiceMetrics(LockOperatorView operatorView, Duration maxSnapshotAge) {
		Assert.notNull(operatorView, "'operatorView' must not be null");
		Assert.isTrue(maxSnapshotAge != null && !maxSnapshotAge.isNegative(), "'maxSnapshotAge' must not be negative");
		this.operatorView = operatorView;
		this.maxSnapshotAgeNanos = maxSnapshotAge.toNanos();
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.operatorView.onLockName(name -> bind(registry, name));
	}

	private void bind(MeterRegistry registry, String name) {
		gauge(registry, LEASES_HELD, "Leases this instance holds now", name, activity -> activity.heldLeases(name));
		gauge(registry, WAITERS, "Threads of this instance waiting for a lock held elsewhere", name,
				activity -> activity.waitingThreads(name));
	}

	private void gauge(MeterRegistry registry, String meter, String description, String name,
			ToIntFunction<LockActivity> value) {
		Gauge.builder(meter, this, metrics -> value.applyAsInt(metrics.activity()))
			.description(description)
			.tag(LockMetrics.NAME_TAG, name)
			.strongReference(true)
			.register(registry);
	}

	/** The current snapshot, or a new one when it is older than the maximum age. */
	private LockActivity activity() {
		long now = System.nanoTime();
		Snapshot current = this.snapshot;
		if (current == null || now - current.takenAtNanos() >= this.maxSnapshotAgeNanos) {
			// two scrapes at once may both take one: harmless, and cheaper than making scrapes wait for each other
			current = new Snapshot(this.operatorView.activityByName(), now);
			this.snapshot = current;
		}
		return current.activity();
	}

	private record Snapshot(LockActivity activity, long takenAtNanos) {
	}

}
