package dev.distlock.benchmarks;

import java.time.Duration;

/**
 * How long and how big each scenario runs. {@link #full()} is the documented run; {@link #smoke()} runs every
 * scenario for a few seconds in CI, to prove that every contestant still works and loses no update.
 *
 * @param name the mode's name, shown in the report
 * @param rounds rounds of scenarios 1-3 (scenario 4 runs at most 3, scenario 5 one); each round runs every
 * contestant once, in the same order
 * @param warmup how long each contestant warms up before each measured run of scenarios 1-3
 * @param uncontended measured time of scenario 1, per contestant and round
 * @param hotKey measured time of scenario 2
 * @param manyKeys measured time of scenario 3
 * @param watchdogLeases leases held at once in scenario 4
 * @param watchdogTtl their lease time; every library renews every third of it
 * @param watchdogWindow how long the renewals of the held leases are observed, twice: with MONITOR, then without
 * @param memoryCycles acquire/release cycles of scenario 5
 */
record Settings(String name, int rounds, Duration warmup, Duration uncontended, Duration hotKey, Duration manyKeys,
		int watchdogLeases, Duration watchdogTtl, Duration watchdogWindow, long memoryCycles) {

	/** Lease time of scenarios 1-3 and 5: Redisson's default watchdog timeout. */
	static final Duration LEASE = Duration.ofSeconds(30);

	/** The longest an acquisition waits in scenarios 1-3 and 5. */
	static final Duration WAIT = Duration.ofSeconds(5);

	static final int HOT_KEY_CLIENTS = 4;

	static final int HOT_KEY_THREADS = 2;

	/** Clients of the second hot-key scenario, one thread each. */
	static final int HOT_KEY_8X1_CLIENTS = 8;

	/** The share of the read-write scenario's operations that read. */
	static final double READ_SHARE = 0.9;

	/** The permits of the permits scenario's semaphore: at most this many of its clients inside at once. */
	static final int PERMITS = 4;

	/** Clients of the permits scenario, one thread each: twice its permits, so that half of them wait. */
	static final int PERMITS_CLIENTS = 8;

	static final int MANY_KEYS_THREADS = 16;

	static final int MANY_KEYS = 1000;

	static final int MEMORY_THREADS = 16;

	static Settings full() {
		return new Settings("full", 5, Duration.ofMillis(500), Duration.ofMillis(1500), Duration.ofSeconds(2),
				Duration.ofMillis(1500), 10_000, Duration.ofSeconds(3), Duration.ofMillis(3500), 1_000_000);
	}

	static Settings smoke() {
		return new Settings("smoke", 1, Duration.ofMillis(300), Duration.ofMillis(500), Duration.ofMillis(1000),
				Duration.ofMillis(500), 1_000, Duration.ofSeconds(3), Duration.ofMillis(1200), 20_000);
	}

	/** The watchdogs' renewal interval: a third of the lease time for every library. */
	Duration renewalInterval() {
		return this.watchdogTtl.dividedBy(3);
	}

}
