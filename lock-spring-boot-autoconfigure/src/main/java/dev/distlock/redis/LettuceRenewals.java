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

/**
 * Pipelined renewal batches on Lettuce's asynchronous commands. Kept apart from {@link LeaseStore} so that nothing
 * Lettuce-specific is loaded when another client is in use.
 */
final class LettuceRenewals {

	private LettuceRenewals() {
	}

	/** Renew on {@code nativeConnection} if it is Lettuce's; returns false (doing nothing) if it is not. */
	static boolean renew(Object nativeConnection, List<LeaseEntry> entries, long[] ttlMillis, List<int[]> batches,
			boolean[] result, long timeoutNanos) throws Exception {
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?> async)) {
			return false;
		}
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) async;
		renewPipelined(commands, entries, ttlMillis, batches, result, timeoutNanos);
		return true;
	}

	private static void renewPipelined(RedisClusterAsyncCommands<byte[], byte[]> commands, List<LeaseEntry> entries,
			long[] ttlMillis, List<int[]> batches, boolean[] result, long timeoutNanos) throws Exception {
		long deadline = System.nanoTime() + timeoutNanos;
		List<byte[][]> keys = new ArrayList<>(batches.size());
		List<byte[][]> args = new ArrayList<>(batches.size());
		List<RedisFuture<List<Object>>> futures = new ArrayList<>(batches.size());
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
			futures.add(commands.evalsha(LockScripts.RENEW_ALL.getSha1(), ScriptOutputType.MULTI, k, a));
		}
		for (int b = 0; b < futures.size(); b++) {
			List<Object> reply;
			try {
				reply = await(futures.get(b), deadline);
			}
			catch (ExecutionException ex) {
				if (!(ex.getCause() instanceof RedisNoScriptException)) {
					throw ex;
				}
				// Redis lost its script cache (a restart or SCRIPT FLUSH): send the script itself once.
				reply = await(commands.eval(bytes(LockScripts.RENEW_ALL.getScriptAsString()), ScriptOutputType.MULTI,
						keys.get(b), args.get(b)), deadline);
			}
			LeaseStore.apply(reply, batches.get(b), result);
		}
	}

	private static <T> T await(RedisFuture<T> future, long deadline) throws Exception {
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
