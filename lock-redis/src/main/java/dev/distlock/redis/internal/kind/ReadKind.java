package dev.distlock.redis.internal.kind;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.single.LeaseRegistry;

import org.jspecify.annotations.Nullable;

/**
 * The read lock of a read-write lock ({@link LockMode#READ}): several readers at once; a reader whose owner holds the
 * write lock reads under it (a downgrade), and a reader that got in lets the other waiting readers of this process in
 * too.
 */
final class ReadKind extends ReadWriteKind {

	static final ReadKind INSTANCE = new ReadKind();

	private ReadKind() {
	}

	@Override
	public LockMode mode() {
		return LockMode.READ;
	}

	@Override
	public boolean writer() {
		return false;
	}

	/** A reader whose owner holds the write lock reads under it (a downgrade). */
	@Override
	public @Nullable LeaseEntry downgradeFrom(LeaseRegistry registry, String redisKey, LockOwner owner) {
		return registry.heldBy(redisKey, owner, LockMode.WRITE);
	}

	/** A reader that got in tells the others of this process that they may enter too. */
	@Override
	public boolean admitsOthers() {
		return true;
	}

}
