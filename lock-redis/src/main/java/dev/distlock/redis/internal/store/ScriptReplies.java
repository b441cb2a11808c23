package dev.distlock.redis.internal.store;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The lease scripts' replies read into values, and what a reply that is not one of the script's fails with: the same
 * whether the reply came through the template (strings) or the Lettuce-native path (bytes). Apart from
 * {@link LeaseStore}, which only sends.
 */
final class ScriptReplies {

	private ScriptReplies() {
	}

	/** ACQUIRE's reply, {holds, token or holder's ttl} or {0, holder's ttl, 1}, as {holds, second, unannounced}. */
	static long[] acquired(@Nullable List<?> reply) {
		if (reply == null || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the acquire script: " + reply);
		}
		return new long[] { ((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
				(reply.size() > 2) ? ((Number) reply.get(2)).longValue() : 0 };
	}

	/** RELEASE's reply, {holds left, others waiting} or with Redis's refusal to publish, as a value. */
	static LeaseStore.Released released(@Nullable List<?> reply) {
		if (reply == null || reply.size() < 2 || reply.size() > 3) {
			throw new IllegalStateException("Unexpected reply from the release script: " + reply);
		}
		return new LeaseStore.Released(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue() == 1,
				(reply.size() == 3) ? text(reply.get(2)) : null);
	}

	/** HOLDER's reply: empty when the key is free, else {holds, token, pttl, labels}. */
	static LeaseStore.@Nullable Held held(@Nullable List<?> reply) {
		if (reply == null || reply.isEmpty()) {
			return null;
		}
		if (reply.size() != 4) {
			throw new IllegalStateException("Unexpected reply from the holder script: " + reply);
		}
		String labels = text(reply.get(3));
		return new LeaseStore.Held(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue(),
				((Number) reply.get(2)).longValue(), labels.isEmpty() ? null : labels);
	}

	/** A string in a script's reply: a {@code String} through the template, bytes through Lettuce's own codec. */
	static String text(@Nullable Object value) {
		return (value instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(value);
	}

	/** A lease script's number, which only a script that failed leaves out. */
	static long nonNull(Long value) {
		if (value == null) {
			throw new IllegalStateException("No reply from a lease script");
		}
		return value;
	}

}
