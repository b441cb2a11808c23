package dev.distlock.redis.internal.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import dev.distlock.redis.internal.script.LockScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The acquisition that waits for replicas ({@code distlock.replica-acks}): the acquire script and {@code WAIT} on one
 * connection, which is what makes {@code WAIT} count this script's write. Apart from {@link LeaseStore}, whose other
 * calls go one script per call through the template or the Lettuce-native path, because this one holds a connection
 * across two commands.
 */
final class ReplicatedAcquire {

	private ReplicatedAcquire() {
	}

	/**
	 * A new acquisition as {@link LeaseStore#acquire}, followed, when it acquired, by
	 * {@code WAIT replicas timeoutMillis} on the same connection (WAIT counts the replicas that acknowledged this
	 * connection's writes, so it must follow the script on its connection): {holds, token or holder's ttl, replicas
	 * that acknowledged (0 when not acquired), unannounced (as for {@link LeaseStore#acquire})}. On a cluster
	 * connection both go to the key's master on one node connection (Lettuce only).
	 */
	static long[] acquire(StringRedisTemplate template, long commandTimeoutMillis, String publishMode, String redisKey,
			String owner, long ttlMillis, String waiter, String label, int replicas, long timeoutMillis) {
		byte[][] keyAndArgs = { bytes(redisKey), bytes(owner), bytes(Long.toString(ttlMillis)), bytes(waiter),
				bytes(""), bytes(""), bytes(publishMode), bytes(label) };
		long[] result = template.execute((RedisCallback<long[]>) connection -> {
			if (connection instanceof RedisClusterConnection) {
				long[] onMaster = ClientTypes.LETTUCE_PRESENT ? LettuceWait.onKeysMaster(connection, LockScripts.ACQUIRE,
						keyAndArgs[0], Arrays.copyOfRange(keyAndArgs, 1, keyAndArgs.length), replicas, timeoutMillis,
						commandTimeoutMillis) : null;
				if (onMaster == null) {
					throw new IllegalStateException("Replica acknowledgements (distlock.replica-acks) on Redis Cluster "
							+ "need Lettuce's cluster connection");
				}
				return onMaster;
			}
			long[] reply = ScriptReplies.acquired(evalOnConnection(connection, LockScripts.ACQUIRE, keyAndArgs));
			long holds = reply[0];
			long second = reply[1];
			if (holds <= 0) {
				return new long[] { holds, second, 0, reply[2] };
			}
			byte[] count = bytes(Integer.toString(replicas));
			byte[] timeout = bytes(Long.toString(timeoutMillis));
			Object acked = ClientTypes.LETTUCE_PRESENT ? LettuceWait.replicas(connection, count, timeout) : null;
			if (acked == null) {
				acked = connection.execute("WAIT", count, timeout);
			}
			return new long[] { holds, second, (acked instanceof Number number) ? number.longValue() : 0, 0 };
		}, true); // the connection itself, not a proxy: WAIT needs Lettuce's own execute
		if (result == null) {
			throw new IllegalStateException("No reply from the acquire script");
		}
		return result;
	}

	/** EVALSHA on this connection, EVAL once when Redis does not have the script cached. */
	private static @Nullable List<?> evalOnConnection(RedisConnection connection, RedisScript<?> script,
			byte[][] keyAndArgs) {
		try {
			return connection.scriptingCommands().evalSha(script.getSha1(), ReturnType.MULTI, 1, keyAndArgs);
		}
		catch (RuntimeException ex) {
			if (!RedisFailures.isNoScript(ex)) {
				throw ex;
			}
			return connection.scriptingCommands().eval(bytes(script.getScriptAsString()), ReturnType.MULTI, 1,
					keyAndArgs);
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
