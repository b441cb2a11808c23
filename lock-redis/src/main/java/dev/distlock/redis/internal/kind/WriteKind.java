package dev.distlock.redis.internal.kind;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.single.LeaseRegistry;

import org.jspecify.annotations.Nullable;

/**
 * The write lock of a read-write lock ({@link LockMode#WRITE}): one writer, no readers; a writer that will wait is
 * noted in the lease (keeping new readers out, see {@code ReadWriteStore.MAX_NOTE_MILLIS}).
 */
public final class WriteKind extends ReadWriteKind {

	static final WriteKind INSTANCE = new WriteKind();

	private WriteKind() {
	}

	@Override
	public LockMode mode() {
		return LockMode.WRITE;
	}

	@Override
	public boolean writer() {
		return true;
	}

	/**
	 * Refused as every read-write request is, and as an upgrade: a reader of the key (the {@code owner} holding its
	 * read lock and not its write lock) asking for its write lock would wait for its own read lock for ever. A writer
	 * that downgraded may take its write lock again (a re-entry).
	 */
	@Override
	public @Nullable RuntimeException refusal(LockRequest request, String redisKey, LockOwner owner, LeaseRegistry registry,
			boolean replicaAcks) {
		RuntimeException refused = super.refusal(request, redisKey, owner, registry, replicaAcks);
		if (refused != null) {
			return refused;
		}
		if (registry.heldBy(redisKey, owner, LockMode.READ) != null
				&& registry.heldBy(redisKey, owner, LockMode.WRITE) == null) {
			return new IllegalStateException(LogSafe.escape(owner.toString()) + " holds the read lock of '"
					+ LogSafe.escape(request.key())
					+ "' and asked for its write lock: upgrading would deadlock; release the read lock first");
		}
		return null;
	}

}
