package dev.distlock.redis.internal.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.redis.internal.script.NativeScriptArgs;
import dev.distlock.redis.internal.script.PermitScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The door to Redis for leases of several holders, each with its own deadline: read-write leases
 * ({@link ReadWriteScripts}, {@link LeaseStore#readWrite()}) and the permits of a semaphore ({@link PermitScripts},
 * {@link LeaseStore#permits()}), whose scripts take the same arguments and give the same replies, on a
 * {@link LeaseStore}'s connections and path: one script call per operation, as for exclusive leases. Renewals go
 * through {@link RenewalBatches}, discards through {@link LeaseStore#discard}, which serve every kind.
 */
public final class ReadWriteStore {

	/**
	 * The longest a waiting writer's note lasts without being refreshed: how long a writer that died while waiting
	 * keeps new readers out at most. A waiting writer tries again (refreshing it) every third of it.
	 */
	static final long MAX_NOTE_MILLIS = 2_000;

	/** The role of a writer in {@link #acquire}; a reader's is {@code r}, a permit's the number of permits. */
	public static final String WRITER = "w";

	private final LeaseStore store;

	private final Scripts scripts;

	ReadWriteStore(LeaseStore store, Scripts scripts) {
		this.store = store;
		this.scripts = scripts;
	}

	/**
	 * The scripts one kind of lease of several holders runs.
	 * @param what the kind, for the message of an unexpected reply
	 * @param acquire its acquisition and re-entry
	 * @param release its release
	 * @param extend its extension
	 * @param owned its ownership check
	 */
	@SuppressWarnings("rawtypes")
	record Scripts(String what, RedisScript<List> acquire, RedisScript<List> release, RedisScript<Long> extend,
			RedisScript<Long> owned) {

		static final Scripts READ_WRITE = new Scripts("read-write", ReadWriteScripts.ACQUIRE, ReadWriteScripts.RELEASE,
				ReadWriteScripts.EXTEND, ReadWriteScripts.OWNED);

		static final Scripts PERMITS = new Scripts("permits", PermitScripts.ACQUIRE, PermitScripts.RELEASE,
				PermitScripts.EXTEND, PermitScripts.OWNED);

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
	 * A new acquisition of {@code attempt} (a writer's, a reader's, or a permit's): {holds, token, 0} when acquired,
	 * {0, ms after which to try again, unannounced} when refused (see {@link LeaseStore#unannounced}); for a permit
	 * {{@value PermitScripts#OTHER_LIMIT}, the holders' number of permits, 0} when it asked for another number. A writer
	 * that will wait is noted in the lease (see {@link #notesWaitingWriter}).
	 * @param attempt the acquisition
	 * @param role {@link #WRITER} for a writer, {@code r} for a reader, the number of permits for a permit
	 * @param willWait whether it will wait when refused
	 * @return {holds, token or ms, unannounced}
	 */
	public long[] acquire(StoredAttempt attempt, String role, boolean willWait) {
		return pair(this.store.run(this.scripts.acquire(), attempt.redisKey(), acquireArgs(attempt, role, willWait)),
				"acquire");
	}

	/**
	 * {@link #acquire} without waiting for Redis (Lettuce's asynchronous commands), {holds, token} or {0, ms}: null
	 * when that path is not available (the caller then calls {@link #acquire} on a thread of its own).
	 * @param attempt the acquisition
	 * @param role {@code w} for a writer, {@code r} for a reader, the number of permits for a permit
	 * @param willWait whether it will wait when refused
	 * @return the reply to come, or null
	 */
	public @Nullable CompletableFuture<long[]> acquireAsync(StoredAttempt attempt, String role, boolean willWait) {
		CompletableFuture<Object> reply = this.store.runNativeAsync(this.scripts.acquire(), attempt.redisKey(),
				NativeScriptArgs.encode(acquireArgs(attempt, role, willWait)));
		return (reply != null) ? reply.thenApply(value -> pair(value, "acquire")) : null;
	}

	/** The arguments of a new acquisition, a waiting writer's note with them ({@link #notesWaitingWriter}). */
	private String[] acquireArgs(StoredAttempt attempt, String role, boolean willWait) {
		String note = notesWaitingWriter(WRITER.equals(role), willWait)
				? Long.toString(Math.max(1, Math.min(attempt.ttlMillis(), MAX_NOTE_MILLIS))) : "";
		return new String[] { attempt.owner(), Long.toString(attempt.ttlMillis()), role, "",
				attempt.downgradeOwner(), (attempt.downgradeToken() != 0) ? Long.toString(attempt.downgradeToken()) : "",
				note, "", willWait ? "1" : "", this.store.publishMode(), attempt.label() };
	}

	/**
	 * One more hold of {@code entry}'s lease (a {@code writer}'s or a reader's), raising the count in Redis to
	 * {@code target} (see {@code LeaseEntry.reentryTarget}): {holds, token}, or {-1, 0} when the hold is gone.
	 * @param entry the lease
	 * @param role {@code w} for a writer, {@code r} for a reader, the number of permits for a permit
	 * @param ttlMillis the lease time in ms
	 * @param target the count the holds are raised to
	 * @return {holds, token}, or {-1, 0}
	 */
	public long[] reenter(StoredLease entry, String role, long ttlMillis, long target) {
		return pair(this.store.run(this.scripts.acquire(), entry.redisKey(), entry.owner(), Long.toString(ttlMillis),
				role, Long.toString(entry.token()), "", "", "",
				Long.toString(target)), "acquire");
	}

	/**
	 * The release of one hold: holds left (-1 when not ours), the release message when it freed the lock for others
	 * (else empty), and Redis's error when it refused the publish.
	 * @param entry the lease
	 * @return what the release did
	 */
	public Released release(StoredLease entry) {
		return released(this.store.run(this.scripts.release(), entry.redisKey(), releaseArgs(entry)), this.scripts);
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
		CompletableFuture<Object> reply = this.store.runNativeAsync(this.scripts.release(), entry.redisKey(),
				NativeScriptArgs.encode(releaseArgs(entry)));
		return (reply != null) ? reply.thenApply(value -> released(value, this.scripts)) : null;
	}

	private static Released released(@Nullable Object value, Scripts scripts) {
		if (!(value instanceof List<?> reply) || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the " + scripts.what() + " release script: " + value);
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
		return number(this.store.run(this.scripts.extend(), entry.redisKey(), entry.owner(), Long.toString(entry.token()),
				Long.toString(millis), add ? "add" : "set", add ? Receipts.callId() : ""));
	}

	/**
	 * The hold's remaining ms when it is still ours, else -1.
	 * @param entry the lease
	 * @return the remaining ms, or -1
	 */
	public long owned(StoredLease entry) {
		return number(this.store.run(this.scripts.owned(), entry.redisKey(), entry.owner(),
				Long.toString(entry.token())));
	}

	/** {holds, token or ms} or {0, ms, 1} as {holds, token or ms, unannounced} ({@link LeaseStore#unannounced}). */
	private long[] pair(@Nullable Object value, String script) {
		if (!(value instanceof List<?> reply) || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the " + this.scripts.what() + " " + script
					+ " script: " + value);
		}
		return new long[] { ((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
				(reply.size() > 2) ? ((Number) reply.get(2)).longValue() : 0 };
	}

	private long number(@Nullable Object value) {
		if (!(value instanceof Number number)) {
			throw new IllegalStateException("Unexpected reply from a " + this.scripts.what() + " script: " + value);
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
