package dev.distlock.benchmarks;

/** The scenarios of the benchmark, in the order they run. */
enum Scenario {

	UNCONTENDED("1. Uncontended acquire + release, one thread"),

	HOT_KEY("2. One hot key, 4 clients x 2 threads, GET-then-SET increment"),

	MANY_KEYS("3. Many keys: 16 threads over 1,000 keys, random access"),

	WATCHDOG("4. Watchdog: leases held at once by one process"),

	MEMORY("5. Memory: heap per held lease, heap after many acquire/release cycles");

	final String title;

	Scenario(String title) {
		this.title = title;
	}

}
