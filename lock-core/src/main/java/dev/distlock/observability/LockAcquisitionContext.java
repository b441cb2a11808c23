package dev.distlock.observability;

import java.time.Duration;

import dev.distlock.core.Lease;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one lock acquisition knows: the lock's name and key, how long it may wait, and, once it
 * ended, its outcome and lease.
 *
 * @since 0.1.0
 */
public class LockAcquisitionContext extends Observation.Context {

	private final String lockName;

	private final String key;

	private final Duration waitTime;

	private @Nullable AcquisitionOutcome outcome;

	private @Nullable Lease lease;

	/**
	 * The context of one acquisition.
	 * @param lockName the lock's name
	 * @param key the evaluated key
	 * @param waitTime the longest time the acquisition waits for the key
	 */
	public LockAcquisitionContext(String lockName, String key, Duration waitTime) {
		this.lockName = lockName;
		this.key = key;
		this.waitTime = waitTime;
	}

	/** {@return the lock's name: bounded, a low-cardinality tag} */
	public String getLockName() {
		return this.lockName;
	}

	/** {@return the evaluated key: unbounded, a high-cardinality tag only} */
	public String getKey() {
		return this.key;
	}

	/** {@return the longest time the acquisition waits for the key} */
	public Duration getWaitTime() {
		return this.waitTime;
	}

	/** {@return how the acquisition ended, or {@code null} while it runs} */
	public @Nullable AcquisitionOutcome getOutcome() {
		return this.outcome;
	}

	/**
	 * Record how the acquisition ended.
	 * @param outcome the outcome
	 */
	public void setOutcome(AcquisitionOutcome outcome) {
		this.outcome = outcome;
	}

	/** {@return the lease acquired, or {@code null} when none (yet)} */
	public @Nullable Lease getLease() {
		return this.lease;
	}

	/**
	 * Record the lease acquired.
	 * @param lease the lease, or {@code null} when none was acquired
	 */
	public void setLease(@Nullable Lease lease) {
		this.lease = lease;
	}

}
