package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;

/**
 * Pipelined renewal batches on Lettuce's asynchronous commands; failures translated to Spring's
 * {@code DataAccessException}. Kept apart from {@link RenewalBatches} so that nothing
 * Lettuce-specific is loaded when another client is in use.
 */
final class LettuceRenewals {

	private LettuceRenewals() {
	}

	/** Renew on {@code nativeConnection} if it is Lettuce's; returns false (doing nothing) if it is not. */
	static boolean renew(Object nativeConnection, List<LeaseEntry> entries, long[] ttlMillis, List<int[]> batches,
			RenewalBatches.Renewals result, long timeoutNanos) {
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?> async)) {
			return false;
		}
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) async;
		renewPipelined(commands, entries, ttlMillis, batches, result, timeoutNanos);
		return true;
	}

	/** Send every batch, then await each reply on its own: a batch that fails or times out fails only its leases. */
	private static void renewPipelined(RedisClusterAsyncCommands<byte[], byte[]> commands, List<LeaseEntry> entries,
			long[] ttlMillis, List<int[]> batches, RenewalBatches.Renewals result, long timeoutNanos) {
		long deadline = System.nanoTime() + timeoutNanos;
		List<byte[][]> keys = new ArrayList<>(batches.size());
		List<byte[][]> args = new ArrayList<>(batches.size());
		List<@Nullable RedisFuture<List<Object>>> futures = new ArrayList<>(batches.size());
		for (int[] batch : batches) {
			byte[][] k = new byte[batch.length][];
			byte[][] a = new byte[batch.length * 3][];
			for (int i = 0; i < batch.length; i++) {
				LeaseEntry entry = entries.get(batch[i]);
				k[i] = bytes(entry.redisKey);
				a[3 * i] = bytes(entry.owner);
				a[3 * i + 1] = bytes(Long.toString(entry.token));
				a[3 * i + 2] = bytes(Long.toString(ttlMillis[batch[i]]));
			}
			keys.add(k);
			args.add(a);
			try {
				futures.add(commands.evalsha(RenewalBatches.script(entries, batch).getSha1(), ScriptOutputType.MULTI, k, a));
			}
			catch (RuntimeException ex) {
				futures.add(null);
				result.fail(batch, LettuceScripts.translate(ex));
			}
		}
		for (int b = 0; b < futures.size(); b++) {
			RedisFuture<List<Object>> future = futures.get(b);
			if (future == null) {
				continue;
			}
			try {
				List<Object> reply;
				try {
					reply = await(future, deadline);
				}
				catch (ExecutionException ex) {
					if (!(ex.getCause() instanceof RedisNoScriptException)) {
						throw ex;
					}
					// Redis lost its script cache (a restart or SCRIPT FLUSH): send the script itself once.
					reply = await(commands.eval(bytes(RenewalBatches.script(entries, batches.get(b)).getScriptAsString()),
							ScriptOutputType.MULTI,
							keys.get(b), args.get(b)), deadline);
				}
				RenewalBatches.apply(reply, batches.get(b), result);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				result.fail(batches.get(b), ex);
			}
			catch (ExecutionException ex) {
				// as Spring would have thrown it: health details and logs name no client exception
				result.fail(batches.get(b), (ex.getCause() instanceof RuntimeException cause) ? LettuceScripts.translate(cause)
						: (ex.getCause() instanceof Exception cause) ? cause : ex);
			}
			catch (TimeoutException ex) {
				result.fail(batches.get(b), new QueryTimeoutException("Redis did not answer the renewal within "
						+ TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + "ms", ex));
			}
			catch (RuntimeException ex) {
				result.fail(batches.get(b), LettuceScripts.translate(ex));
			}
		}
	}

	private static <T> T await(RedisFuture<T> future, long deadline)
			throws InterruptedException, ExecutionException, TimeoutException {
		try {
			return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(false);
			throw ex;
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
