package dev.distlock.redis.internal.single;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.kind.ExclusiveKind;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import org.jspecify.annotations.Nullable;

/**
 * One call of the acquire script for a new acquisition, and what its failure means: sent and unanswered (it may run
 * yet, so the attempt is marked for the reconciler), refused or failed by Redis (final; nothing for the reconciler
 * unless the script may have written before a refused command), or, with replica acknowledgements,
 * answered but acknowledged by too few replicas (the new lease is deleted again). One role, so that
 * {@link LeaseAcquirer} only decides when to try.
 */
public final class AcquireCall {

	private final LeaseStore store;

	private final String clientId;

	/** Where this process's waiters are, for how long it has waited (the age of its note in Redis). */
	private final ReleaseSubscriber subscriber;

	/** Replicas that must acknowledge a new lease before it counts as acquired; 0 for none. */
	private final int replicaAcks;

	private final long replicaAckTimeoutMillis;

	AcquireCall(LeaseStore store, String clientId, ReleaseSubscriber subscriber, int replicaAcks,
			long replicaAckTimeoutMillis) {
		this.store = store;
		this.clientId = clientId;
		this.subscriber = subscriber;
		this.replicaAcks = replicaAcks;
		this.replicaAckTimeoutMillis = replicaAckTimeoutMillis;
	}

	/**
	 * {hold count, token} when acquired, {0, holder's remaining ttl} when held by another owner; noting this process
	 * as a waiter in the lease when it {@code willWait}.
	 */
	long[] call(LockRequest request, Attempt attempt, boolean willWait) throws InterruptedException {
		try {
			return attempt.kind.acquire(this, request, attempt, willWait);
		}
		catch (ReplicaShortfall ex) {
			throw new LockUnavailableException(request.key(), "Could not acquire lock '" + request.key() + "': "
					+ ex.getMessage(), ex);
		}
		catch (RequestRefused ex) { // Redis answered that the request itself is wrong: final, nothing to reconcile
			throw ex;
		}
		catch (RuntimeException ex) {
			// Sent and unanswered, Redis may run it yet; refused part-way, a script keeps what it wrote before the
			// refused command (a new hold without expiry). Either way the reconciler deletes what this owner may hold.
			// Answered otherwise, Redis has nothing of it: nothing to reconcile (see RedisFailures.mayHaveWritten).
			if (RedisFailures.mayHaveWritten(ex)) {
				attempt.unanswered = true;
			}
			if (Thread.interrupted()) { // the client gave up waiting for Redis because this thread was interrupted
				InterruptedException interrupted = new InterruptedException();
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw failure(request, attempt.redisKey, ex);
		}
	}

	/**
	 * {@link #call} without waiting for Redis (Lettuce's asynchronous commands), failing the same way (an unanswered
	 * call marks the attempt); null when that path is not available (another client, or replica acknowledgements,
	 * whose WAIT blocks): the caller then makes the blocking call on a thread of its own.
	 */
	@Nullable CompletableFuture<long[]> callAsync(LockRequest request, Attempt attempt, boolean willWait) {
		if (this.replicaAcks > 0) {
			return null;
		}
		CompletableFuture<long[]> reply;
		try {
			reply = attempt.kind.acquireAsync(this, attempt, willWait);
		}
		catch (RuntimeException ex) { // no connection to send it on
			if (RedisFailures.mayHaveWritten(ex)) {
				attempt.unanswered = true;
			}
			return CompletableFuture.failedFuture(failure(request, attempt.redisKey, ex));
		}
		if (reply == null) {
			return null;
		}
		CompletableFuture<long[]> result = new CompletableFuture<>();
		reply.whenComplete((value, failure) -> {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (cause instanceof RequestRefused refused) { // final, as in call
				result.completeExceptionally(refused);
				return;
			}
			if (cause == null && value[0] < 0) {
				cause = new IllegalStateException("The acquire script refused a new owner of '"
						+ LogSafe.escape(request.key()) + "'");
			}
			if (cause == null) {
				result.complete(value);
				return;
			}
			if (RedisFailures.mayHaveWritten(cause)) {
				attempt.unanswered = true; // as in call: it may run yet, or kept part of what it wrote
			}
			result.completeExceptionally(failure(request, attempt.redisKey,
					(cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause)));
		});
		return result;
	}

	public LeaseStore store() {
		return this.store;
	}

	/**
	 * The acquire call of the plain lease ({@link LockScripts}, see {@link ExclusiveKind}): with replica
	 * acknowledgements when the engine asks for them; Redis's refusal of a new owner is a failure.
	 */
	public long[] acquirePlain(LockRequest request, Attempt attempt, boolean willWait) {
		String waiter = willWait ? this.clientId : "";
		if (this.replicaAcks > 0) {
			return callAcquireReplicated(request, attempt, waiter);
		}
		long[] reply = this.store.acquire(attempt.redisKey, attempt.owner, attempt.ttlMillis, waiter,
				willWait ? this.subscriber.waitedMillis(attempt.channel) : 0, 0, 0, attempt.label,
				willWait ? this.subscriber.takeCarried(attempt.channel) : "");
		if (reply[0] < 0) {
			throw new IllegalStateException("The acquire script refused a new owner of '"
					+ LogSafe.escape(request.key()) + "'");
		}
		return reply;
	}

	/** {@link #acquirePlain} on Lettuce's asynchronous commands (never with replica acknowledgements, see callAsync). */
	public @Nullable CompletableFuture<long[]> acquirePlainAsync(Attempt attempt, boolean willWait) {
		return this.store.acquireAsync(attempt.redisKey, attempt.owner, attempt.ttlMillis,
				willWait ? this.clientId : "", willWait ? this.subscriber.waitedMillis(attempt.channel) : 0,
				attempt.label, willWait ? this.subscriber.takeCarried(attempt.channel) : "");
	}

	/**
	 * A new acquisition that counts only once {@code replicaAcks} replicas acknowledged it (WAIT on the script's
	 * connection). A lease too few replicas acknowledged is deleted again at once (it may not survive a failover), and
	 * the attempt fails like one Redis did not answer: retried within the wait. If that delete goes unanswered, the
	 * attempt is marked unanswered, so the reconciler deletes the lease once Redis answers.
	 */
	private long[] callAcquireReplicated(LockRequest request, Attempt attempt, String waiter) {
		long[] reply = this.store.acquireReplicated(attempt.redisKey, attempt.owner, attempt.ttlMillis, waiter,
				attempt.label, this.replicaAcks, this.replicaAckTimeoutMillis);
		if (reply[0] < 0) {
			throw new IllegalStateException("The acquire script refused a new owner of '"
					+ LogSafe.escape(request.key()) + "'");
		}
		if (reply[0] == 0 || reply[2] >= this.replicaAcks) {
			return new long[] { reply[0], reply[1], reply[3] };
		}
		String shortfall = "only " + reply[2] + " of " + this.replicaAcks + " replica(s) acknowledged the new lease of '"
				+ request.key() + "' within " + this.replicaAckTimeoutMillis + "ms (distlock.replica-acks)";
		try {
			this.store.discard(attempt.redisKey, attempt.owner, attempt.channel);
		}
		catch (RuntimeException ex) {
			attempt.unanswered = true;
			ReplicaShortfall failure = new ReplicaShortfall(shortfall + "; deleting it got no answer, so it is deleted "
					+ "once Redis answers, or expires");
			failure.addSuppressed(ex);
			throw failure;
		}
		throw new ReplicaShortfall(shortfall + "; it was deleted again");
	}

	/** Too few replicas acknowledged a new lease: Redis answered, but the lease does not count. */
	static final class ReplicaShortfall extends RuntimeException {

		private static final long serialVersionUID = 1L;

		ReplicaShortfall(String message) {
			super(message);
		}

	}

	static LockUnavailableException unansweredWithin(LockRequest request, LockUnavailableException last) {
		Throwable cause = (last.getCause() != null) ? last.getCause() : last;
		if (cause instanceof ReplicaShortfall) {
			return new LockUnavailableException(request.key(), "Could not acquire lock '" + request.key() + "' within "
					+ request.waitTime() + ": " + cause.getMessage(), cause);
		}
		// the message of a LockException has its key escaped already (LogSafe)
		return new LockUnavailableException(request.key(), last.getMessage().replace("Could not acquire lock '"
				+ LogSafe.escape(request.key()) + "': ", "Could not acquire lock '" + request.key() + "' within "
				+ request.waitTime() + ": "), cause);
	}

	/** {@link #failure} of any exception of a call, {@code ex} itself when it is one already. */
	static LockUnavailableException failureOf(LockRequest request, String redisKey, Exception ex) {
		return (ex instanceof LockUnavailableException failed) ? failed : failure(request, redisKey,
				(ex instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex));
	}

	/** Refused, unanswered, or answered with an error: only a refusal is final (see {@link RedisFailures}). */
	static LockUnavailableException failure(LockRequest request, String redisKey, RuntimeException ex) {
		return RedisFailures.of(request.key(), redisKey, "acquire", ex, "");
	}

}
