package dev.distlock.redis.internal.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.redis.internal.script.LockScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisPipelineException;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The renewals of a round, batched, and each batch judged and told on its own; the rest of the lease operations are {@link LeaseStore}'s,
 * which builds this class on its own connection factory and template.
 * <p>
 * Renewals are batched twice: one {@link LockScripts#RENEW_ALL} call renews up to {@value #BATCH_SIZE} leases, and the
 * calls of one watchdog tick are pipelined on Lettuce's shared connection (one call per hash slot on a cluster connection, as a
 * script may only touch keys of one slot there). On the template path (another client, or
 * {@code EnginePaths.nativeScripts()} off) several batches go in one Spring Data pipeline, a single one (and those of a
 * cluster connection) through the template one after the other.
 * <p>
 * Every failure reaches the caller as Spring's {@code DataAccessException}: the template translates its own, and the
 * Lettuce-native shortcut ({@link LettuceRenewals}) translates Lettuce's the same way.
 */
public final class RenewalBatches {

	/** The most leases one renewal script call renews. */
	public static final int BATCH_SIZE = 500;

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate template;

	/** Whether renewals may take the Lettuce-native shortcut ({@code EnginePaths.nativeScripts()}). */
	private final boolean nativeRenewals;

	RenewalBatches(RedisConnectionFactory connectionFactory, StringRedisTemplate template, boolean nativeRenewals) {
		this.connectionFactory = connectionFactory;
		this.template = template;
		this.nativeRenewals = nativeRenewals;
	}

	/** Told of each batch's result as it comes. */
	public interface BatchListener {

		/**
		 * The leases at {@code batch} (indexes into the round's entries) were answered for, or failed: their entries of
		 * {@code result} are set.
		 * @param batch indexes into the round's entries
		 * @param result the round's results
		 */
		void done(int[] batch, Renewals result);

	}

	/**
	 * Renew the given leases, raising each one's expiry to at least its ttl, and tell {@code listener} per batch, as
	 * soon as that batch is answered (or failed, or timed out after {@code timeoutNanos}), whether each of its leases is
	 * still ours, or why it could not be asked. Returns without waiting for Redis.
	 * <p>
	 * The batches are independent: in a cluster a shard that does not answer fails and delays only the batches of its
	 * own slots, and the others' results are applied while it is still silent (issue 26: a dead master's command
	 * timeout held back the healthy shards' renewals past their leases' deadline). On Lettuce's native path the batches
	 * are sent at once and their replies come asynchronously; on the template path each batch (a cluster's) or the
	 * pipeline of all of them (one server's) is a blocking call on {@code executor}. {@code listener} runs on
	 * {@code executor}'s threads; different batches may be told concurrently.
	 * @param entries the leases
	 * @param ttlMillis per lease, the ttl its expiry is raised to at least
	 * @param timeoutNanos how long a batch may take
	 * @param executor where the listener runs
	 * @param listener told of each batch
	 */
	public void renewEach(List<? extends StoredLease> entries, long[] ttlMillis, long timeoutNanos, Executor executor,
			BatchListener listener) {
		Round round = start(entries, ttlMillis, timeoutNanos, executor, listener);
		RedisConnection connection = round.connection();
		if (connection != null) {
			round.done().whenCompleteAsync((ignored, failure) -> closeQuietly(connection), executor);
		}
	}

	/**
	 * Renew the given leases as {@link #renewEach} does, and wait for every batch (at most {@code timeoutNanos}, and a
	 * second for the template path to give up): for callers that need the whole round (the Redlock watchdog, tests).
	 * @param entries the leases
	 * @param ttlMillis per lease, the ttl its expiry is raised to at least
	 * @param timeoutNanos how long the round may take
	 * @return per lease, still ours or the failure of its batch
	 */
	public Renewals renewAll(List<? extends StoredLease> entries, long[] ttlMillis, long timeoutNanos) {
		boolean[] told = new boolean[entries.size()];
		Round round = start(entries, ttlMillis, timeoutNanos, Runnable::run, (batch, result) -> {
			synchronized (told) {
				for (int index : batch) {
					told[index] = true;
				}
			}
		});
		try {
			round.done().get(timeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			// the batches not told yet fail below
		}
		finally {
			RedisConnection connection = round.connection();
			if (connection != null) {
				closeQuietly(connection);
			}
		}
		Renewals result = round.result();
		Renewals copy = new Renewals(entries.size());
		synchronized (told) {
			for (int i = 0; i < told.length; i++) {
				copy.ours[i] = result.ours[i];
				copy.failures[i] = told[i] ? result.failures[i]
						: new QueryTimeoutException("Redis did not answer the renewal within "
								+ TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + "ms");
			}
		}
		return copy;
	}

	/**
	 * Send a round. The connection of the result, if any, is the one Lettuce's native path sends on: it must be closed
	 * once {@link Round#done()} completes, not before (a dedicated connection would cancel the replies on its way).
	 */
	private Round start(List<? extends StoredLease> entries, long[] ttlMillis, long timeoutNanos, Executor executor,
			BatchListener listener) {
		Renewals result = new Renewals(entries.size());
		if (entries.isEmpty()) {
			return new Round(result, CompletableFuture.completedFuture(null), null);
		}
		RedisConnection connection;
		try {
			connection = this.connectionFactory.getConnection();
		}
		catch (RuntimeException ex) {
			int[] all = RenewalGroups.allOf(entries.size());
			result.fail(all, ex);
			return new Round(result, tell(executor, listener, all, result), null);
		}
		// a cluster connection routes each script by its keys' slot, and a script may touch one slot only
		boolean cluster = connection instanceof RedisClusterConnection;
		List<int[]> batches = RenewalGroups.batches(entries, cluster);
		if (this.nativeRenewals) {
			CompletableFuture<Void> sent;
			try {
				sent = LettuceRenewals.renew(connection.getNativeConnection(), entries, ttlMillis, batches, result,
						timeoutNanos, executor, listener);
			}
			catch (RuntimeException ex) {
				closeQuietly(connection);
				throw ex;
			}
			if (sent != null) {
				return new Round(result, sent, connection);
			}
		}
		closeQuietly(connection);
		if (!cluster && batches.size() > 1) {
			// Spring Data pipelines on a dedicated connection (Lettuce: a new one per pipeline, unless pooled): worth
			// it for many batches, not for the one batch of most rounds, which goes on the shared connection below
			return new Round(result, run(executor, () -> {
				renewPipelined(entries, ttlMillis, batches, result);
				batches.forEach(batch -> listener.done(batch, result));
			}, () -> {
				int[] all = RenewalGroups.allOf(entries.size());
				result.fail(all, new IllegalStateException("The lock watchdog is closed"));
				listener.done(all, result);
			}), null);
		}
		List<CompletableFuture<Void>> sent = new ArrayList<>(batches.size());
		for (int[] batch : batches) {
			sent.add(run(executor, () -> {
				renewThroughTemplate(entries, ttlMillis, batch, result);
				listener.done(batch, result);
			}, () -> {
				result.fail(batch, new IllegalStateException("The lock watchdog is closed"));
				listener.done(batch, result);
			}));
		}
		return new Round(result, CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)), null);
	}

	/** {@code task} on {@code executor}, or {@code refused} here if the executor takes no more (it is closing). */
	private static CompletableFuture<Void> run(Executor executor, Runnable task, Runnable refused) {
		try {
			return CompletableFuture.runAsync(task, executor);
		}
		catch (RejectedExecutionException ex) {
			refused.run();
			return CompletableFuture.completedFuture(null);
		}
	}

	private static CompletableFuture<Void> tell(Executor executor, BatchListener listener, int[] batch,
			Renewals result) {
		return run(executor, () -> listener.done(batch, result), () -> listener.done(batch, result));
	}

	private static void closeQuietly(RedisConnection connection) {
		try {
			connection.close();
		}
		catch (RuntimeException ex) {
			// a connection that cannot be closed is the client's to clean up; the renewals are told already
		}
	}

	/** A round on its way: the results as they come, done when every batch was told. */
	private record Round(Renewals result, CompletableFuture<Void> done, @Nullable RedisConnection connection) {
	}

	/**
	 * Every batch's EVALSHA in one Spring Data pipeline on {@code connection} (what {@code executePipelined} does, on
	 * the connection already open): the replies awaited together with the client's command timeout, failures
	 * translated by Spring. A batch whose reply is an error fails
	 * alone; one that finds the script cache empty (a restart, SCRIPT FLUSH) is sent again through the template, which
	 * falls back to EVAL; when the pipeline gives no reply per batch, every batch is sent again that way.
	 */
	private void renewPipelined(List<? extends StoredLease> entries, long[] ttlMillis, List<int[]> batches,
			Renewals result) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			renewPipelined(connection, entries, ttlMillis, batches, result);
		}
		catch (RuntimeException ex) {
			result.fail(RenewalGroups.allOf(entries.size()), ex);
		}
	}

	private void renewPipelined(RedisConnection connection, List<? extends StoredLease> entries, long[] ttlMillis,
			List<int[]> batches, Renewals result) {
		List<byte[][]> calls = new ArrayList<>(batches.size());
		for (int[] batch : batches) {
			byte[][] keysAndArgs = new byte[batch.length * 4][];
			for (int i = 0; i < batch.length; i++) {
				StoredLease entry = entries.get(batch[i]);
				keysAndArgs[i] = bytes(entry.redisKey());
				keysAndArgs[batch.length + 3 * i] = bytes(entry.owner());
				keysAndArgs[batch.length + 3 * i + 1] = bytes(Long.toString(entry.token()));
				keysAndArgs[batch.length + 3 * i + 2] = bytes(Long.toString(ttlMillis[batch[i]]));
			}
			calls.add(keysAndArgs);
		}
		List<?> replies;
		try {
			connection.openPipeline();
			try {
				for (int b = 0; b < calls.size(); b++) {
					connection.scriptingCommands().evalSha(RenewalGroups.script(entries, batches.get(b)).getSha1(), ReturnType.MULTI,
							batches.get(b).length, calls.get(b));
				}
			}
			finally {
				replies = connection.closePipeline();
			}
		}
		catch (RedisPipelineException ex) {
			replies = ex.getPipelineResult();
			if (replies.size() != batches.size()) {
				// Spring's Lettuce pipeline reports only its first error and no replies (a script cache emptied by a
				// restart fails every batch): each batch goes alone through the template, judged on its own
				for (int[] batch : batches) {
					renewThroughTemplate(entries, ttlMillis, batch, result);
				}
				return;
			}
		}
		catch (RuntimeException ex) {
			result.fail(RenewalGroups.allOf(entries.size()), ex);
			return;
		}
		for (int b = 0; b < batches.size(); b++) {
			int[] batch = batches.get(b);
			Object reply = (b < replies.size()) ? replies.get(b) : null;
			if (reply instanceof Exception failure && RedisFailures.isNoScript(failure)) {
				renewThroughTemplate(entries, ttlMillis, batch, result);
			}
			else if (reply instanceof Exception failure) {
				result.fail(batch, failure);
			}
			else {
				apply((reply instanceof List<?> list) ? list : null, batch, result);
			}
		}
	}

	/** One batch through {@code RedisTemplate.execute(script, …)}: EVALSHA, EVAL when the script is not cached. */
	private void renewThroughTemplate(List<? extends StoredLease> entries, long[] ttlMillis, int[] batch,
			Renewals result) {
		List<String> keys = new ArrayList<>(batch.length);
		Object[] args = new Object[batch.length * 3];
		for (int i = 0; i < batch.length; i++) {
			StoredLease entry = entries.get(batch[i]);
			keys.add(entry.redisKey());
			args[3 * i] = entry.owner();
			args[3 * i + 1] = Long.toString(entry.token());
			args[3 * i + 2] = Long.toString(ttlMillis[batch[i]]);
		}
		try {
			apply(this.template.execute(RenewalGroups.script(entries, batch), keys, args), batch, result);
		}
		catch (RuntimeException ex) {
			result.fail(batch, ex);
		}
	}

	static void apply(@Nullable List<?> reply, int[] batch, Renewals result) {
		if (reply == null || reply.size() != batch.length) {
			result.fail(batch, new IllegalStateException("Unexpected reply from the renewal script: " + reply));
			return;
		}
		for (int i = 0; i < batch.length; i++) {
			result.ours[batch[i]] = ((Number) reply.get(i)).longValue() == 1;
		}
	}

	/** Per lease of a renewal round: still ours, or the failure of its batch (then {@code ours} means nothing). */
	public static final class Renewals {

		/** Per lease: whether it is still ours. */
		public final boolean[] ours;

		/** Per lease: the failure of its batch, or null. */
		public final @Nullable Exception[] failures;

		/**
		 * The results of a round of {@code size} leases, none told yet.
		 * @param size the number of leases
		 */
		public Renewals(int size) {
			this.ours = new boolean[size];
			this.failures = new Exception[size];
		}

		void fail(int[] batch, Exception failure) {
			for (int index : batch) {
				this.failures[index] = failure;
			}
		}

	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
