package dev.distlock.redis;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;

/**
 * {@code WAIT} on a Lettuce connection: Spring Data's generic {@code execute} has no reply type for it and would read
 * its integer reply as bytes. Only loaded when Lettuce is on the class path.
 */
final class LettuceWait {

	private LettuceWait() {
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
