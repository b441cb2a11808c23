package dev.distlock.core;

import java.util.Optional;

/**
 * An operator's override for a lock whose holder is stuck: delete its lease whoever holds it, in any process. Kept
 * apart from {@link LockOperatorView}, which only reads, because not every engine can take a lease from its holder.
 * <p>
 * The {@code DELETE} operation of the {@code locks} actuator endpoint ({@code distlock.actuator.force-release.enabled})
 * needs the engine bean that implements {@link LockOperatorView} to implement this interface too; when it does not, the
 * application fails to start with that property named, rather than offer an operation that cannot work.
 *
 * @since 0.1.0
 */
public interface LockForceReleaser {

	/**
	 * Delete the lease on {@code key} whoever holds it, and let its waiters know. The holder finds its lease lost at
	 * its next renewal or release.
	 * @param key the lock key as callers give it
	 * @return the lease that was deleted, or empty when the key was free
	 * @throws IllegalArgumentException if {@code key} is blank
	 * @throws LockUnavailableException if the store could not be reached
	 */
	Optional<ForcedRelease> forceRelease(String key);

}
