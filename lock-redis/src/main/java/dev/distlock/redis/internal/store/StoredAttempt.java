package dev.distlock.redis.internal.store;

/**
 * A new acquisition of a read-write lease as the store sends it ({@link ReadWriteStore#acquire}): what the script
 * needs, nothing of the acquisition's own bookkeeping. The engine's attempt implements it; what the attempt must
 * remember of the call (a waiting writer's note in Redis, see {@link ReadWriteStore#notesWaitingWriter}) its caller
 * marks, not the store.
 */
public interface StoredAttempt {

	/** {@return the lease's key in Redis} */
	String redisKey();

	/** {@return the owner id, fresh for this acquisition} */
	String owner();

	/** {@return the lease time in ms} */
	long ttlMillis();

	/** {@return for a downgrade, the owner id of the write lease its owner holds, else empty} */
	String downgradeOwner();

	/** {@return for a downgrade, the token of that write lease, else 0} */
	long downgradeToken();

	/** {@return the holder's label the lease stores, empty when the service stores none} */
	String label();

}
