package dev.distlock.redis;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LogSafe;

import org.jspecify.annotations.Nullable;

/**
 * What the engine refuses of a read-write request before any call to Redis: an upgrade (a reader of the key asking for
 * its write lock), which would wait for its own read lock for ever, and fair and read-write locks with replica
 * acknowledgements, which their scripts do not wait for.
 */
final class ReadWriteLocks {

	private ReadWriteLocks() {
	}

	/**
	 * Why {@code request} is refused at once, or null. A reader is the {@code owner} holding the key's read lock and not
	 * its write lock: a writer that downgraded may take its write lock again (a re-entry).
	 */
	static @Nullable RuntimeException refusal(LockRequest request, String redisKey, LockOwner owner,
			LeaseRegistry registry, boolean replicaAcks) {
		if (request.mode() == LockMode.EXCLUSIVE) {
			return null;
		}
		if (replicaAcks) {
			// the fair and read-write scripts do not wait for replica acknowledgements: refused, never weaker
			return request.mode().unsupported(request.key(), "this engine with replica acknowledgements "
					+ "(distlock.replica-acks)");
		}
		if (request.mode() == LockMode.WRITE && registry.heldBy(redisKey, owner, LockMode.READ) != null
				&& registry.heldBy(redisKey, owner, LockMode.WRITE) == null) {
			return new IllegalStateException(LogSafe.escape(owner.toString()) + " holds the read lock of '"
					+ LogSafe.escape(request.key())
					+ "' and asked for its write lock: upgrading would deadlock; release the read lock first");
		}
		return null;
	}

}
