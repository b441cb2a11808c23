package dev.distlock.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

import dev.distlock.core.LockLostEvent;

/**
 * What the chaos test saw, shared by its threads: counts by name, the facts the final checks need (loss events,
 * release outcomes, rejected writes, overlaps and a semaphore's excesses) and the invariant violations, each with a description that says what
 * broke. Counts only inform; violations fail the test.
 */
final class ChaosLedger {

	/** How the last release of a lease ended, as its holder saw it. */
	enum ReleaseOutcome {

		RELEASED, LOST, UNANSWERED

	}

	/** One holder of a lock key inside its critical section. */
	record Holder(String key, String owner, long token) {
	}

	/** Two holders of one key inside their critical sections at once; {@code first} entered first. */
	record Overlap(Holder first, Holder second) {
	}

	/** More holders of a semaphore inside their critical sections at once than its permits, in the order they entered. */
	record Excess(List<Holder> inside, int permits) {
	}

	private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

	private final List<String> violations = new CopyOnWriteArrayList<>();

	/** Loss events by owner (owner ids are fresh per lease, so an owner names one lease). */
	final Map<String, LockLostEvent> lostEvents = new ConcurrentHashMap<>();

	/** The outcome of each lease's last release, by owner, with the token the holder held. */
	final Map<String, ReleaseRecord> lastReleases = new ConcurrentHashMap<>();

	/** Owners that got a LockLostException from some release of one of their holds, with the token. */
	final Map<String, Long> lostExceptions = new ConcurrentHashMap<>();

	final List<Holder> rejectedWrites = new CopyOnWriteArrayList<>();

	final List<Overlap> overlaps = new CopyOnWriteArrayList<>();

	final List<Excess> excesses = new CopyOnWriteArrayList<>();

	record ReleaseRecord(long token, ReleaseOutcome outcome) {
	}

	void count(String name) {
		add(name, 1);
	}

	void add(String name, long amount) {
		this.counts.computeIfAbsent(name, n -> new LongAdder()).add(amount);
	}

	long get(String name) {
		LongAdder adder = this.counts.get(name);
		return (adder != null) ? adder.sum() : 0;
	}

	void violation(String description) {
		this.violations.add(description);
		System.err.println("CHAOS VIOLATION: " + description);
	}

	List<String> violations() {
		return new ArrayList<>(this.violations);
	}

	/** Counts whose name starts with {@code prefix}, by the rest of the name, in name order. */
	Map<String, Long> countsStartingWith(String prefix) {
		Map<String, Long> selected = new LinkedHashMap<>();
		this.counts.keySet().stream().filter(name -> name.startsWith(prefix)).sorted()
			.forEach(name -> selected.put(name.substring(prefix.length()), get(name)));
		return selected;
	}

	void lost(LockLostEvent event) {
		count("lost.events");
		if (this.lostEvents.putIfAbsent(event.owner(), event) != null) {
			violation("a second LockLostEvent for one lease: " + event + ", first " + this.lostEvents.get(event.owner()));
		}
	}

}
