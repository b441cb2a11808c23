package dev.distlock.core;

/**
 * What {@link LockForceReleaser#forceRelease(String)} removed: the holder of the lease at that moment, so that an
 * operator's intervention can be audited.
 *
 * @param key the lock key
 * @param owner the owner id that held it (its client id names the instance)
 * @param holdCount how many holds the owner had open
 * @param fencingToken the removed lease's fencing token; the next holder gets a greater one
 * @since 0.1.0 (in {@code dev.distlock.redis} until 0.2.0)
 */
public record ForcedRelease(String key, String owner, long holdCount, long fencingToken) {
}
