package dev.distlock.redis.internal.kind;

import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.ReadWriteStore;

/**
 * The two kinds of a read-write lock ({@link ReadKind}, {@link WriteKind}): one lease hash of
 * {@link ReadWriteScripts} with each holder's own deadline, reached through {@link LeaseStore#readWrite()}.
 */
abstract class ReadWriteKind extends SharedKind {

	/** {@return whether the scripts act for a writer ("w") or a reader ("r")} */
	abstract boolean writer();

	@Override
	final String role() {
		return writer() ? ReadWriteStore.WRITER : "r";
	}

	@Override
	final ReadWriteStore calls(LeaseStore store) {
		return store.readWrite();
	}

}
