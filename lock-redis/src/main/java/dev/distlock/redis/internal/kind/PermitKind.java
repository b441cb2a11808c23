package dev.distlock.redis.internal.kind;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.script.PermitScripts;
import dev.distlock.redis.internal.single.AcquireCall;
import dev.distlock.redis.internal.single.Attempt;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.single.LeaseRegistry;
import dev.distlock.redis.internal.single.RequestRefused;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.ReadWriteStore;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A permit of a semaphore ({@link LockMode#PERMITS}): up to {@link #permits} holders of every process at once, each
 * permit a lease of its own in one hash of {@link PermitScripts} (per-holder deadline and fencing token), reached
 * through {@link LeaseStore#permits()}. One kind per number of permits, an immutable value like the singletons of the
 * other kinds.
 * <p>
 * What it adds to the shared kinds: the number of permits in the acquire call (the holders' number rules; another one
 * is refused, naming the key and both numbers, from Redis's answer or, for a re-entry, from this process's lease
 * before any call), and its own renewal script. A re-entry by the owner of a permit re-enters it (the engine's
 * re-entry by {@code LockOwner}), so one owner never holds two permits of a key.
 */
final class PermitKind extends SharedKind {

	private static final PermitKind[] SMALL = new PermitKind[17];

	static {
		for (int i = 1; i < SMALL.length; i++) {
			SMALL[i] = new PermitKind(i);
		}
	}

	private final int permits;

	private final String role;

	private PermitKind(int permits) {
		this.permits = permits;
		this.role = Integer.toString(permits);
	}

	/** {@return the kind of a request for one of {@code permits} permits} */
	static PermitKind of(int permits) {
		return (permits > 0 && permits < SMALL.length) ? SMALL[permits] : new PermitKind(permits);
	}

	/** {@return the number of permits of the semaphore this kind acquires on} */
	int permits() {
		return this.permits;
	}

	@Override
	public LockMode mode() {
		return LockMode.PERMITS;
	}

	@Override
	String role() {
		return this.role;
	}

	@Override
	ReadWriteStore calls(LeaseStore store) {
		return store.permits();
	}

	/**
	 * Refused as every shared kind is with replica acknowledgements, and when this {@code owner} holds a permit of the
	 * key from a request with another number of permits (its re-entry would otherwise pass without Redis seeing it).
	 */
	@Override
	public @Nullable RuntimeException refusal(LockRequest request, String redisKey, LockOwner owner,
			LeaseRegistry registry, boolean replicaAcks) {
		RuntimeException refused = super.refusal(request, redisKey, owner, registry, replicaAcks);
		if (refused != null) {
			return refused;
		}
		LeaseEntry held = registry.heldBy(redisKey, owner, LockMode.PERMITS);
		if (held != null && held.kind instanceof PermitKind other && other.permits != this.permits) {
			return new IllegalStateException(otherLimit(request.key(), this.permits, other.permits));
		}
		return null;
	}

	@Override
	public long[] acquire(AcquireCall call, LockRequest request, Attempt attempt, boolean willWait) {
		return checked(super.acquire(call, request, attempt, willWait), request.key());
	}

	@Override
	public @Nullable CompletableFuture<long[]> acquireAsync(AcquireCall call, Attempt attempt, boolean willWait) {
		CompletableFuture<long[]> reply = super.acquireAsync(call, attempt, willWait);
		return (reply != null) ? reply.thenApply(value -> checked(value, attempt.key)) : null;
	}

	/** {@code reply} unless Redis said the holders set another number of permits: then final, naming both. */
	private long[] checked(long[] reply, String key) {
		if (reply[0] == PermitScripts.OTHER_LIMIT) {
			throw new RequestRefused(otherLimit(key, this.permits, reply[1]));
		}
		return reply;
	}

	private static String otherLimit(String key, long asked, long held) {
		return "Lock '" + LogSafe.escape(key) + "' is a semaphore of " + held
				+ " permits (set by its holders), but this request asks for " + asked + " permits: every request on "
				+ "one key must ask for the same number while it has holders";
	}

	@Override
	@SuppressWarnings("rawtypes")
	public RedisScript<List> renewAllScript() {
		return PermitScripts.RENEW_ALL;
	}

	@Override
	public String toString() {
		return "PermitKind[" + this.permits + "]";
	}

}
