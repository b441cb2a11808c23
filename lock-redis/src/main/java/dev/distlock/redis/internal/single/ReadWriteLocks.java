package dev.distlock.redis.internal.single;

import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.kind.WriteKind;

import org.jspecify.annotations.Nullable;

/**
 * What the engine refuses of a request before any call to Redis, as its kind decides ({@link LockKind#refusal}): an
 * upgrade (a reader of the key asking for its write lock, {@link WriteKind}), which would wait for its own read lock
 * for ever, and fair and read-write locks with replica acknowledgements, which their scripts do not wait for.
 */
public final class ReadWriteLocks {

	private ReadWriteLocks() {
	}

	/**
	 * Why {@code request}, of the lock kind {@code kind}, is refused at once, or null. A reader is the {@code owner} holding the key's read lock and not
	 * its write lock: a writer that downgraded may take its write lock again (a re-entry).
	 */
	public static @Nullable RuntimeException refusal(LockKind kind, LockRequest request, String redisKey, LockOwner owner,
			LeaseRegistry registry, boolean replicaAcks) {
		return kind.refusal(request, redisKey, owner, registry, replicaAcks);
	}

}
