package dev.distlock.benchmarks;

/** A figure a scenario reports: its column label, format, and how rounds are combined. */
enum Metric {

	OPS_PER_SEC("ops/s", "%,.0f", Combine.MEDIAN),

	CS_PER_SEC("critical sections/s", "%,.0f", Combine.MEDIAN),

	READ_OPS_PER_SEC("read ops/s", "%,.0f", Combine.MEDIAN),

	WRITE_OPS_PER_SEC("write ops/s", "%,.0f", Combine.MEDIAN),

	P50_MICROS("p50 µs", "%,.0f", Combine.MEDIAN),

	P99_MICROS("p99 µs", "%,.0f", Combine.MEDIAN),

	ALTERNATING_P50_MICROS("p50 µs, operations alternated", "%,.0f", Combine.MEDIAN),

	CPU_MICROS_PER_OP("client CPU µs / op", "%,.0f", Combine.MEDIAN),

	REDIS_MICROS_PER_OP("Redis µs / op", "%,.1f", Combine.MEDIAN),

	ALLOCATED_BYTES_PER_OP("client heap allocated / op, bytes", "%,.0f", Combine.MEDIAN),

	ROUND_TRIPS_PER_OP("round trips / op", "%,.2f", Combine.MEDIAN),

	WAIT_P50_MILLIS("wait p50 ms", "%,.2f", Combine.MEDIAN),

	WAIT_P99_MILLIS("wait p99 ms", "%,.2f", Combine.MEDIAN),

	WAIT_MAX_MILLIS("wait max ms", "%,.0f", Combine.MEDIAN),

	READ_WAIT_P99_MILLIS("read wait p99 ms", "%,.2f", Combine.MEDIAN),

	WRITE_WAIT_P99_MILLIS("write wait p99 ms", "%,.2f", Combine.MEDIAN),

	LOCK_ROUND_TRIPS_PER_SECTION("lock round trips / critical section", "%,.1f", Combine.MEDIAN),

	BUSIEST_CLIENT_PERCENT("busiest client's share, %", "%,.0f", Combine.MEDIAN),

	LOST_UPDATES("lost updates", "%,.0f", Combine.MAX),

	MOST_INSIDE("most holders inside", "%,.0f", Combine.MAX),

	TIMEOUTS("timeouts", "%,.0f", Combine.SUM),

	LEASES("leases", "%,.0f", Combine.MEDIAN),

	ACQUIRE_ALL_MILLIS("acquire all, ms", "%,.0f", Combine.MEDIAN),

	ROUND_TRIPS_PER_CYCLE("round trips / cycle", "%,.0f", Combine.MEDIAN),

	BUSY_MILLIS_PER_CYCLE("busy ms / cycle", "%,.1f", Combine.MEDIAN),

	LONGEST_BURST_MILLIS("longest burst ms", "%,.1f", Combine.MEDIAN),

	REDIS_CPU_MILLIS_PER_CYCLE("Redis CPU ms / cycle", "%,.1f", Combine.MEDIAN),

	CLIENT_CPU_PERCENT("client CPU, % of a core", "%,.1f", Combine.MEDIAN),

	CONNECTIONS("connections", "%,.0f", Combine.MEDIAN),

	LEASES_ALIVE("leases alive after window", "%,.0f", Combine.MIN),

	LEASES_LOST("leases lost at release", "%,.0f", Combine.MAX),

	HEAP_PER_LEASE_BYTES("retained heap / held lease, bytes", "%,.0f", Combine.MEDIAN),

	CYCLES("acquire/release cycles", "%,.0f", Combine.MEDIAN),

	HEAP_START_MIB("heap at start, MiB", "%,.2f", Combine.MEDIAN),

	HEAP_HALF_MIB("heap at half, MiB", "%,.2f", Combine.MEDIAN),

	HEAP_END_MIB("heap at end, MiB", "%,.2f", Combine.MEDIAN),

	HEAP_GROWTH_KIB("growth, KiB", "%,.0f", Combine.MEDIAN),

	LEFTOVER("leases left (process + Redis)", "%,.0f", Combine.MAX);

	final String label;

	final String format;

	final Combine combine;

	Metric(String label, String format, Combine combine) {
		this.label = label;
		this.format = format;
		this.combine = combine;
	}

	String format(double value) {
		return String.format(java.util.Locale.ROOT, this.format, value);
	}

	/** How the figures of several rounds become one. */
	enum Combine {

		MEDIAN, MAX, MIN, SUM

	}

}
