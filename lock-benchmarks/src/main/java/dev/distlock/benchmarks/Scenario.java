package dev.distlock.benchmarks;

/** The scenarios of the benchmark, in the order they run. */
enum Scenario {

	UNCONTENDED("1. Uncontended acquire + release, one thread"),

	HOT_KEY("2. One hot key, 4 clients x 2 threads, GET-then-SET increment"),

	HOT_KEY_8X1("2b. One hot key, 8 clients x 1 thread, GET-then-SET increment"),

	MANY_KEYS("3. Many keys: 16 threads over 1,000 keys, random access"),

	WATCHDOG("4. Watchdog: leases held at once by one process"),

	MEMORY("5. Memory: heap per held lease, heap after many acquire/release cycles"),

	READ_WRITE("6. Read-write, 90 % reads: 4 clients x 2 threads on one key"),

	PERMITS("7. Permits = 4: 8 clients x 1 thread on one key's semaphore");

	final String title;

	/** The hot-key scenarios: one key, a GET-then-SET increment as the critical section. */
	static final java.util.Set<Scenario> HOT_KEYS = java.util.EnumSet.of(HOT_KEY, HOT_KEY_8X1);

	Scenario(String title) {
		this.title = title;
	}

}
