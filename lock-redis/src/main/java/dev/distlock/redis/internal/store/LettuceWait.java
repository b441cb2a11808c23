package dev.distlock.redis.internal.store;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceClusterConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * {@code WAIT} on a Lettuce connection: Spring Data's generic {@code execute} has no reply type for it and would read
 * its integer reply as bytes. On a cluster, the script and its {@code WAIT} go to the connection of the master that
 * owns the key's slot, since {@code WAIT} counts the replicas that acknowledged the writes of the connection it is
 * sent on. Only loaded when Lettuce is on the class path.
 */
final class LettuceWait {

	private LettuceWait() {
	}

	/**
	 * Run {@code script} (a list reply whose first element is the hold count) on the connection to the master of
	 * {@code key}'s slot and, when it acquired, {@code WAIT replicas timeoutMillis} on the same node connection:
	 * {holds, second element of the reply, replicas that acknowledged (0 when not acquired), third element of the reply
	 * or 0}. Null when the connection is not a Lettuce cluster connection.
	 */
	static long @Nullable [] onKeysMaster(RedisConnection connection, RedisScript<?> script, byte[] key, byte[][] args,
			int replicas, long timeoutMillis, long commandTimeoutMillis) {
		if (!(connection instanceof LettuceClusterConnection cluster)
				|| !(cluster.getNativeConnection() instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> nativeCluster)) {
			return null;
		}
		RedisClusterNode master = cluster.clusterGetNodeForKey(key);
		try {
			RedisAsyncCommands<byte[], byte[]> node = nativeCluster.getStatefulConnection()
				.getConnection(master.getId())
				.async();
			byte[][] keys = { key };
			List<Object> reply;
			try {
				reply = LettuceFutures.awaitOrCancel(node.evalsha(script.getSha1(), ScriptOutputType.MULTI, keys, args),
						commandTimeoutMillis, TimeUnit.MILLISECONDS);
			}
			catch (RedisNoScriptException ex) {
				reply = LettuceFutures.awaitOrCancel(node.eval(script.getScriptAsString(), ScriptOutputType.MULTI, keys,
						args), commandTimeoutMillis, TimeUnit.MILLISECONDS);
			}
			if (reply == null || reply.size() < 2) {
				throw new IllegalStateException("Unexpected reply from the acquire script: " + reply);
			}
			long holds = ((Number) reply.get(0)).longValue();
			long second = ((Number) reply.get(1)).longValue();
			if (holds <= 0) {
				return new long[] { holds, second, 0, (reply.size() > 2) ? ((Number) reply.get(2)).longValue() : 0 };
			}
			Long acked = LettuceFutures.awaitOrCancel(node.waitForReplication(replicas, timeoutMillis),
					commandTimeoutMillis, TimeUnit.MILLISECONDS);
			return new long[] { holds, second, (acked != null) ? acked : 0, 0 };
		}
		catch (RuntimeException ex) {
			throw LettuceScripts.translate(ex);
		}
	}

	/** The replicas that acknowledged; null when the connection is not Lettuce's. */
	static @Nullable Long replicas(RedisConnection connection, byte[] replicas, byte[] timeoutMillis) {
		if (!(connection instanceof LettuceConnection lettuce)) {
			return null;
		}
		Object reply = lettuce.execute("WAIT", new IntegerOutput<>(ByteArrayCodec.INSTANCE), replicas, timeoutMillis);
		return (reply instanceof Long count) ? count : 0L;
	}

}
