package dev.distlock.redis.internal.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;

/**
 * Pipelined renewal batches on Lettuce's asynchronous commands, each batch's reply handled when it comes; failures
 * translated to Spring's {@code DataAccessException}. Kept apart from {@link RenewalBatches} so that nothing
 * Lettuce-specific is loaded when another client is in use.
 */
final class LettuceRenewals {

	private LettuceRenewals() {
	}

	/**
	 * Send every batch on {@code nativeConnection} if it is Lettuce's, and tell {@code listener} each batch's result on
	 * {@code executor} as it comes; returns when all are sent, with a future that completes once every batch was told,
	 * or null (doing nothing) if the connection is not Lettuce's. A batch that fails or is not answered within
	 * {@code timeoutNanos} fails only its own leases, and never holds back another's reply.
	 */
	static @Nullable CompletableFuture<Void> renew(Object nativeConnection, List<? extends StoredLease> entries,
			long[] ttlMillis, List<int[]> batches, RenewalBatches.Renewals result, long timeoutNanos, Executor executor,
			RenewalBatches.BatchListener listener) {
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?> async)) {
			return null;
		}
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) async;
		long deadline = System.nanoTime() + timeoutNanos;
		List<CompletableFuture<Void>> told = new ArrayList<>(batches.size());
		for (int[] batch : batches) {
			byte[][] keys = new byte[batch.length][];
			byte[][] args = new byte[batch.length * 3][];
			for (int i = 0; i < batch.length; i++) {
				StoredLease entry = entries.get(batch[i]);
				keys[i] = bytes(entry.redisKey());
				args[3 * i] = bytes(entry.owner());
				args[3 * i + 1] = bytes(Long.toString(entry.token()));
				args[3 * i + 2] = bytes(Long.toString(ttlMillis[batch[i]]));
			}
			Batch sent = new Batch(commands, RenewalGroups.script(entries, batch).getSha1(),
					RenewalGroups.script(entries, batch).getScriptAsString(), keys, args, batch, result, deadline,
					timeoutNanos, executor, listener);
			told.add(sent.send(true));
		}
		return CompletableFuture.allOf(told.toArray(CompletableFuture[]::new));
	}

	/** One batch on its way: sent, then its reply (or failure, or silence until the deadline) told to the listener. */
	private record Batch(RedisClusterAsyncCommands<byte[], byte[]> commands, String sha, String script, byte[][] keys,
			byte[][] args, int[] batch, RenewalBatches.Renewals result, long deadline, long timeoutNanos,
			Executor executor, RenewalBatches.BatchListener listener) {

		/** Send the batch by its script's digest, or, when {@code !bySha}, the script itself. */
		CompletableFuture<Void> send(boolean bySha) {
			RedisFuture<List<Object>> future;
			try {
				future = bySha ? this.commands.evalsha(this.sha, ScriptOutputType.MULTI, this.keys, this.args)
						: this.commands.eval(bytes(this.script), ScriptOutputType.MULTI, this.keys, this.args);
			}
			catch (RuntimeException ex) {
				return told(LettuceScripts.translate(ex));
			}
			// a copy times out, not Lettuce's own command: a late reply then finds its command still there, and none is
			// completed by two threads
			CompletableFuture<List<Object>> timed = ReplyDeadlines.within(future.toCompletableFuture().copy(),
					this.deadline - System.nanoTime());
			return timed.handleAsync((reply, failure) -> {
				if (failure == null) {
					RenewalBatches.apply(reply, this.batch, this.result);
					this.listener.done(this.batch, this.result);
					return CompletableFuture.<Void>completedFuture(null);
				}
				Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure;
				if (cause instanceof RedisNoScriptException && bySha) {
					// Redis lost its script cache (a restart or SCRIPT FLUSH): send the script itself once
					return send(false);
				}
				if (cause instanceof TimeoutException) {
					// not sent yet (a reconnecting connection buffers it)? then never: it would renew a lease given up
					future.cancel(false);
					return told(new QueryTimeoutException("Redis did not answer the renewal within "
							+ TimeUnit.NANOSECONDS.toMillis(this.timeoutNanos) + "ms", cause));
				}
				// as Spring would have thrown it: health details and logs name no client exception
				return told((cause instanceof RuntimeException runtime) ? LettuceScripts.translate(runtime)
						: (cause instanceof Exception exception) ? exception : new IllegalStateException(cause));
			}, this.executor).thenCompose(next -> next);
		}

		private CompletableFuture<Void> told(Exception failure) {
			this.result.fail(this.batch, failure);
			this.listener.done(this.batch, this.result);
			return CompletableFuture.completedFuture(null);
		}

	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
