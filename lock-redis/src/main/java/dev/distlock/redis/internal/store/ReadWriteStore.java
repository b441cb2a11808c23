package dev.distlock.redis.internal.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.redis.internal.script.NativeScriptArgs;
import dev.distlock.redis.internal.script.ReadWriteScripts;

import org.jspecify.annotations.Nullable;

/**
 * The door to Redis for read-write leases ({@link ReadWriteScripts}), on a {@link LeaseStore}'s connections and path:
 * one script call per operation, as for exclusive leases. Renewals go through {@link RenewalBatches}, discards through
 * {@link LeaseStore#discard}, which serve both kinds.
 */
public final class ReadWriteStore {

	/**
	 * The longest a waiting writer's note lasts without being refreshed: how long a writer that died while waiting
	 * keeps new readers out at most. A waiting writer tries again (refreshing it) every third of it.
	 */
	static final long MAX_NOTE_MILLIS = 2_000;

	private final LeaseStore store;

	ReadWriteStore(LeaseStore store) {
		this.store = store;
	}

	/**
	 * Whether a new acquisition leaves a note in the lease whatever Redis answers: a writer that will wait is noted
	 * there, so the caller marks its attempt (before the call) for its owner id to be discarded, the note with it,
	 * should the acquisition end without the lock. The store only says so: the attempt is the caller's.
	 * @param writer whether a writer acquires
	 * @param willWait whether it will wait when refused
	 * @return whether {@link #acquire} with these arguments writes a waiting writer's note
	 */
	public static boolean notesWaitingWriter(boolean writer, boolean willWait) {
		return writer && willWait;
	}

	/**
	 * A new acquisition of {@code attempt} (a {@code writer}'s or a reader's): {holds, token, 0} when acquired, {0, ms
	 * after which to try again, unannounced} when refused (see {@link LeaseStore#unannounced}). A writer that will wait is
	 * noted in the lease (see {@link #notesWaitingWriter}).
	 * @param attempt the acquisition
	 * @param writer whether a writer acquires
	 * @param willWait whether it will wait when refused
	 * @return {holds, token or ms, unannounced}
	 */
	public long[] acquire(StoredAttempt attempt, boolean writer, boolean willWait) {
		return pair(this.store.run(ReadWriteScripts.ACQUIRE, attempt.redisKey(), acquireArgs(attempt, writer, willWait)),
				"acquire");
	}

	/**
	 * {@link #acquire} without waiting for Redis (Lettuce's asynchronous commands), {holds, token} or {0, ms}: null
	 * when that path is not available (the caller then calls {@link #acquire} on a thread of its own).
	 * @param attempt the acquisition
	 * @param writer whether a writer acquires
	 * @param willWait whether it will wait when refused
	 * @return the reply to come, or null
	 */
	public @Nullable CompletableFuture<long[]> acquireAsync(StoredAttempt attempt, boolean writer, boolean willWait) {
		CompletableFuture<Object> reply = this.store.runNativeAsync(ReadWriteScripts.ACQUIRE, attempt.redisKey(),
				NativeScriptArgs.encode(acquireArgs(attempt, writer, willWait)));
		return (reply != null) ? reply.thenApply(value -> pair(value, "acquire")) : null;
	}

	/** The arguments of a new acquisition, a waiting writer's note with them ({@link #notesWaitingWriter}). */
	private String[] acquireArgs(StoredAttempt attempt, boolean writer, boolean willWait) {
		String note = notesWaitingWriter(writer, willWait)
				? Long.toString(Math.max(1, Math.min(attempt.ttlMillis(), MAX_NOTE_MILLIS))) : "";
		return new String[] { attempt.owner(), Long.toString(attempt.ttlMillis()), writer ? "w" : "r", "",
				attempt.downgradeOwner(), (attempt.downgradeToken() != 0) ? Long.toString(attempt.downgradeToken()) : "",
				note, "", willWait ? "1" : "", this.store.publishMode(), attempt.label() };
	}

	/**
	 * One more hold of {@code entry}'s lease (a {@code writer}'s or a reader's), raising the count in Redis to
	 * {@code target} (see {@code LeaseEntry.reentryTarget}): {holds, token}, or {-1, 0} when the hold is gone.
	 * @param entry the lease
	 * @param writer whether a writer re-enters
	 * @param ttlMillis the lease time in ms
	 * @param target the count the holds are raised to
	 * @return {holds, token}, or {-1, 0}
	 */
	public long[] reenter(StoredLease entry, boolean writer, long ttlMillis, long target) {
		return pair(this.store.run(ReadWriteScripts.ACQUIRE, entry.redisKey(), entry.owner(), Long.toString(ttlMillis),
				writer ? "w" : "r", Long.toString(entry.token()), "", "", "",
				Long.toString(target)), "acquire");
	}

	/**
	 * The release of one hold: holds left (-1 when not ours), the release message when it freed the lock for others
	 * (else empty), and Redis's error when it refused the publish.
	 * @param entry the lease
	 * @return what the release did
	 */
	public Released release(StoredLease entry) {
		return released(this.store.run(ReadWriteScripts.RELEASE, entry.redisKey(), releaseArgs(entry)));
	}

	/** RELEASE's arguments, with the holds before and the receipt time (see {@link LeaseStore#release}). */
	private String[] releaseArgs(StoredLease entry) {
		return new String[] { entry.owner(), Long.toString(entry.token()), entry.channel(), this.store.publishMode(),
				Long.toString(entry.holdsBeforeRelease()),
				Long.toString(this.store.receiptMillis(entry.ttlMillis())) };
	}

	/**
	 * {@link #release} without waiting for Redis, as {@link #acquireAsync}: null when that path is not available.
	 * @param entry the lease
	 * @return what the release did, to come, or null
	 */
	public @Nullable CompletableFuture<Released> releaseAsync(StoredLease entry) {
		CompletableFuture<Object> reply = this.store.runNativeAsync(ReadWriteScripts.RELEASE, entry.redisKey(),
				NativeScriptArgs.encode(releaseArgs(entry)));
		return (reply != null) ? reply.thenApply(ReadWriteStore::released) : null;
	}

	private static Released released(@Nullable Object value) {
		if (!(value instanceof List<?> reply) || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the read-write release script: " + value);
		}
		String message = ScriptReplies.text(reply.get(1));
		return new Released(((Number) reply.get(0)).longValue(), message.isEmpty() ? null : message,
				(reply.size() == 3) ? ScriptReplies.text(reply.get(2)) : null);
	}

	/**
	 * The hold's new remaining ms after adding {@code millis} or setting it, -1 when it is not ours.
	 * @param entry the lease
	 * @param millis the ms to add, or the ttl to set
	 * @param add whether to add rather than set
	 * @return the new remaining ms, or -1
	 */
	public long extend(StoredLease entry, long millis, boolean add) {
		return number(this.store.run(ReadWriteScripts.EXTEND, entry.redisKey(), entry.owner(), Long.toString(entry.token()),
				Long.toString(millis), add ? "add" : "set", add ? Receipts.callId() : ""));
	}

	/**
	 * The hold's remaining ms when it is still ours, else -1.
	 * @param entry the lease
	 * @return the remaining ms, or -1
	 */
	public long owned(StoredLease entry) {
		return number(this.store.run(ReadWriteScripts.OWNED, entry.redisKey(), entry.owner(), Long.toString(entry.token())));
	}

	/** {holds, token or ms} or {0, ms, 1} as {holds, token or ms, unannounced} ({@link LeaseStore#unannounced}). */
	private static long[] pair(@Nullable Object value, String script) {
		if (!(value instanceof List<?> reply) || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the read-write " + script + " script: " + value);
		}
		return new long[] { ((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
				(reply.size() > 2) ? ((Number) reply.get(2)).longValue() : 0 };
	}

	private static long number(@Nullable Object value) {
		if (!(value instanceof Number number)) {
			throw new IllegalStateException("Unexpected reply from a read-write lease script: " + value);
		}
		return number.longValue();
	}

	/**
	 * What the release of a read-write hold did.
	 * @param holdsLeft this owner's holds left, -1 when the hold was not ours
	 * @param message the release message published when the lock became free for others, else null
	 * @param publishRefused Redis's error when it refused to publish (the release stands), else null
	 */
	public record Released(long holdsLeft, @Nullable String message, @Nullable String publishRefused) {
	}

}
