package dev.distlock.redis;

import java.util.concurrent.TimeUnit;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Lease scripts sent straight on Lettuce's asynchronous commands, awaited like Spring Data Redis awaits them (the
 * factory's command timeout, the interrupt status kept). It saves what {@code RedisTemplate} adds to each call (a
 * connection proxy, reflective dispatch, argument and result conversion): about half of the client's allocations per
 * acquire and release. Failures are translated to Spring's {@code DataAccessException} as the template would. Kept
 * apart from {@link LeaseStore} so that nothing Lettuce-specific is loaded with another client.
 */
final class LettuceScripts {

	/** Spring Data Redis's default command timeout, for factories that do not say. */
	private static final long DEFAULT_TIMEOUT_MILLIS = TimeUnit.SECONDS.toMillis(60);

	private static final LettuceExceptionConverter CONVERTER = new LettuceExceptionConverter();

	private LettuceScripts() {
	}

	/** The factory's command timeout in milliseconds. */
	static long timeoutMillis(RedisConnectionFactory connectionFactory) {
		return (connectionFactory instanceof LettuceConnectionFactory lettuce) ? lettuce.getTimeout()
				: DEFAULT_TIMEOUT_MILLIS;
	}

	/**
	 * Run {@code script} with EVALSHA (EVAL once if Redis lost its script cache) on {@code nativeConnection} if it is
	 * Lettuce's, and return its reply: a {@code Long} for a script whose result type is {@code Long}, a list
	 * otherwise; return null, doing nothing, if the connection is not Lettuce's.
	 */
	static @Nullable Object run(Object nativeConnection, RedisScript<?> script, byte[][] keys, byte[][] args,
			long timeoutMillis) {
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?> async)) {
			return null;
		}
		ScriptOutputType type = (script.getResultType() == Long.class) ? ScriptOutputType.INTEGER : ScriptOutputType.MULTI;
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) async;
		try {
			try {
				return LettuceFutures.awaitOrCancel(commands.evalsha(script.getSha1(), type, keys, args),
						timeoutMillis, TimeUnit.MILLISECONDS);
			}
			catch (RedisNoScriptException ex) {
				return LettuceFutures.awaitOrCancel(commands.eval(script.getScriptAsString(), type, keys, args),
						timeoutMillis, TimeUnit.MILLISECONDS);
			}
		}
		catch (RuntimeException ex) {
			throw translateRuntime(ex);
		}
	}

	/**
	 * Lettuce's exception as Spring's {@code DataAccessException}, as the template's path translates it, so that no
	 * client class reaches callers or health details; unchanged when Spring has no translation for it.
	 */
	static Exception translate(Exception ex) {
		DataAccessException translated = CONVERTER.convert(ex);
		return (translated != null) ? translated : ex;
	}

	private static RuntimeException translateRuntime(RuntimeException ex) {
		DataAccessException translated = CONVERTER.convert(ex);
		return (translated != null) ? translated : ex;
	}

}
