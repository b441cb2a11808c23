package dev.distlock.core;

import java.util.Map;

/**
 * What an engine is doing now, per lock name ({@link LockOperatorView#activityByName()}): the leases it holds and the
 * threads waiting for a lock held elsewhere. One consistent-enough picture taken in one pass, for gauges that read
 * many names at once; names with nothing held or waiting are absent and read as 0.
 *
 * @param heldLeases leases held now (lost ones not counted), by lock name
 * @param waitingThreads threads waiting now, by lock name
 * @since 0.1.0 (in {@code dev.distlock.redis} until 0.2.0)
 */
public record LockActivity(Map<String, Integer> heldLeases, Map<String, Integer> waitingThreads) {

	/** Nothing held, nobody waiting. */
	public static final LockActivity IDLE = new LockActivity(Map.of(), Map.of());

	/**
	 * Copies both maps, so the activity does not change after it was taken.
	 * @param heldLeases leases held now (lost ones not counted), by lock name
	 * @param waitingThreads threads waiting now, by lock name
	 */
	public LockActivity {
		heldLeases = Map.copyOf(heldLeases);
		waitingThreads = Map.copyOf(waitingThreads);
	}

	/**
	 * {@return leases of the lock {@code name} held now}
	 * @param name the lock's name
	 */
	public int heldLeases(String name) {
		return this.heldLeases.getOrDefault(name, 0);
	}

	/**
	 * {@return threads waiting now for the lock {@code name}}
	 * @param name the lock's name
	 */
	public int waitingThreads(String name) {
		return this.waitingThreads.getOrDefault(name, 0);
	}

}
