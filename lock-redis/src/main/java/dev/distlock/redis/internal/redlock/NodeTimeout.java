package dev.distlock.redis.internal.redlock;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * How long one call waits for one Redlock node: either fixed (an explicitly set node timeout keeps exactly that
 * meaning), or derived from what the nodes answer in.
 * <p>
 * Why derived: a fixed 50 ms is far above a healthy node's sub-millisecond replies, yet a loaded machine (a build, a GC
 * pause, two cores shared) stretches replies past it, and then releases and renewals miss their quorum for no fault of
 * the nodes. The adaptive timeout follows the replies: the {@value #PERCENTILE}th percentile of the last
 * {@value #WINDOW} reply times (of every node, late ones included, since a reply the caller no longer waited for still
 * says how long the nodes take) times {@value #FACTOR}, never below the floor nor above the ceiling. The floor keeps
 * today's 50 ms where the nodes are fast; the ceiling keeps a hung node's cost per operation bounded; and a call never
 * waits longer than a third of the lease time it is for ({@link #forTtl(long)}), so that the wait leaves most of the
 * lease's validity (ttl − elapsed − drift) to its holder. Lease times must be at least three floors, as they had to be
 * at least three fixed timeouts.
 * <p>
 * Thread safety: {@link #record(long)} is called from every node's call thread; the window is guarded by this object's
 * monitor and the derived value is published through a volatile field, so {@link #nanos()} never blocks.
 */
final class NodeTimeout {

	/** The adaptive timeout's floor: the engine's former fixed default. */
	static final long FLOOR_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** The adaptive timeout's ceiling: a paused or hung node costs an operation at most this long. */
	static final long CEILING_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	static final int WINDOW = 256;

	static final int PERCENTILE = 99;

	static final int FACTOR = 3;

	/** The derived value is recomputed every this many samples (a sort of the window). */
	private static final int RECOMPUTE_EVERY = 16;

	private final boolean fixed;

	private final long floorNanos;

	private final long ceilingNanos;

	private final long[] samples = new long[WINDOW];

	private int count;

	private int next;

	private volatile long current;

	private NodeTimeout(boolean fixed, long floorNanos, long ceilingNanos) {
		if (floorNanos < 1 || ceilingNanos < floorNanos) {
			throw new IllegalArgumentException("floor " + floorNanos + " ns must be positive and at most the ceiling "
					+ ceilingNanos + " ns");
		}
		this.fixed = fixed;
		this.floorNanos = floorNanos;
		this.ceilingNanos = ceilingNanos;
		this.current = floorNanos;
	}

	/** {@return a timeout of exactly {@code nanos}, whatever the nodes answer in} */
	static NodeTimeout fixed(long nanos) {
		return new NodeTimeout(true, nanos, nanos);
	}

	/** {@return a timeout derived from the replies, within {@code floorNanos} and {@code ceilingNanos}} */
	static NodeTimeout adaptive(long floorNanos, long ceilingNanos) {
		return new NodeTimeout(false, floorNanos, ceilingNanos);
	}

	/** {@return whether this timeout follows the replies} */
	boolean isAdaptive() {
		return !this.fixed;
	}

	/** {@return the smallest value this timeout takes: the fixed value, or the adaptive floor} */
	long floorNanos() {
		return this.floorNanos;
	}

	/** {@return the largest value this timeout takes: the fixed value, or the adaptive ceiling} */
	long ceilingNanos() {
		return this.ceilingNanos;
	}

	/** {@return the timeout now} */
	long nanos() {
		return this.current;
	}

	/**
	 * {@return the timeout for a call about a lease of {@code ttlMillis}: adaptive, at most a third of it (but never
	 * below the floor, which the engine already requires the lease time to triple); fixed, the fixed value}
	 */
	long forTtl(long ttlMillis) {
		long now = this.current;
		if (this.fixed) {
			return now;
		}
		return Math.min(now, Math.max(this.floorNanos, TimeUnit.MILLISECONDS.toNanos(ttlMillis) / 3));
	}

	/** Note that a node answered in {@code nanos}; a fixed timeout ignores it. */
	void record(long nanos) {
		if (this.fixed) {
			return;
		}
		long derived = -1;
		synchronized (this) {
			this.samples[this.next] = Math.max(0, nanos);
			this.next = (this.next + 1) % WINDOW;
			this.count++;
			if (this.count % RECOMPUTE_EVERY == 0 || this.count < RECOMPUTE_EVERY) {
				int size = Math.min(this.count, WINDOW);
				long[] sorted = Arrays.copyOf(this.samples, size);
				Arrays.sort(sorted);
				int index = Math.min(size - 1, (int) Math.ceil(size * PERCENTILE / 100.0) - 1);
				long high = sorted[Math.max(0, index)];
				derived = clamp(high > Long.MAX_VALUE / FACTOR ? Long.MAX_VALUE : high * FACTOR);
			}
		}
		if (derived >= 0) {
			this.current = derived;
		}
	}

	private long clamp(long nanos) {
		return Math.max(this.floorNanos, Math.min(this.ceilingNanos, nanos));
	}

	@Override
	public String toString() {
		return this.fixed ? "fixed " + TimeUnit.NANOSECONDS.toMillis(this.current) + " ms"
				: "adaptive " + TimeUnit.NANOSECONDS.toMillis(this.current) + " ms (floor "
						+ TimeUnit.NANOSECONDS.toMillis(this.floorNanos) + " ms, ceiling "
						+ TimeUnit.NANOSECONDS.toMillis(this.ceilingNanos) + " ms)";
	}

}
