package dev.distlock.redis.internal.store;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Lease scripts sent straight on Lettuce's asynchronous commands, awaited like Spring Data Redis awaits them (the
 * factory's command timeout, the interrupt status kept). It saves what {@code RedisTemplate} adds to each call (a
 * connection proxy, reflective dispatch, argument and result conversion): about half of the client's allocations per
 * acquire and release. Kept apart from {@link LeaseStore} so that nothing Lettuce-specific is loaded with another
 * client.
 */
public final class LettuceScripts {

	/** Spring Data Redis's default command timeout, for factories that do not say. */
	private static final long DEFAULT_TIMEOUT_MILLIS = TimeUnit.SECONDS.toMillis(60);

	private static final LettuceExceptionConverter EXCEPTION_CONVERTER = new LettuceExceptionConverter();

	static {
		// the deadlines' thread starts here, when a lock service on Lettuce is built, not on Lettuce's event loop
		ReplyDeadlines.start();
	}

	private LettuceScripts() {
	}

	/**
	 * Whether {@code connectionFactory} is Lettuce's own factory (not one that wraps it).
	 * @param connectionFactory the factory
	 * @return whether it is a {@code LettuceConnectionFactory}
	 */
	public static boolean isLettuce(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory;
	}

	/** Whether the factory is Lettuce's, connecting to a Redis Cluster. */
	static boolean isCluster(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
	}

	/**
	 * The factory's command timeout in milliseconds.
	 * @param connectionFactory the factory
	 * @return its command timeout, or the default one when it is not Lettuce's
	 */
	public static long timeoutMillis(RedisConnectionFactory connectionFactory) {
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
				return LettuceFutures.awaitOrCancel(commands.evalsha(script.getSha1(), type, keys, args), timeoutMillis,
						TimeUnit.MILLISECONDS);
			}
			catch (RedisNoScriptException ex) {
				return LettuceFutures.awaitOrCancel(commands.eval(script.getScriptAsString(), type, keys, args),
						timeoutMillis, TimeUnit.MILLISECONDS);
			}
		}
		catch (RuntimeException ex) {
			throw translate(ex);
		}
	}

	/**
	 * Whether the factory's connections share one native connection (Lettuce's default): only then may a command
	 * outlive the Spring connection it was sent on, as an asynchronous call does.
	 */
	static boolean sharesNativeConnection(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection();
	}

	/**
	 * {@link #run} without waiting: a future of the script's reply, failed with Spring's exception (a timeout after
	 * {@code timeoutMillis} as the blocking call's, the command cancelled); null, doing nothing, if the connection is
	 * not Lettuce's. The future completes on Lettuce's event loop or the {@link ReplyDeadlines} thread: chain nothing slow
	 * on it.
	 */
	static @Nullable CompletableFuture<Object> runAsync(Object nativeConnection, RedisScript<?> script, byte[][] keys,
			byte[][] args, long timeoutMillis) {
		if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?> async)) {
			return null;
		}
		ScriptOutputType type = (script.getResultType() == Long.class) ? ScriptOutputType.INTEGER : ScriptOutputType.MULTI;
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) async;
		CompletableFuture<Object> reply = new CompletableFuture<>();
		RedisFuture<Object> sha = commands.evalsha(script.getSha1(), type, keys, args);
		sha.whenComplete((value, failure) -> {
			Throwable cause = unwrap(failure);
			if (cause == null) {
				reply.complete(value);
			}
			else if (cause instanceof RedisNoScriptException) {
				RedisFuture<Object> eval = commands.eval(script.getScriptAsString(), type, keys, args);
				eval.whenComplete((evalValue, evalFailure) -> complete(reply, evalValue, unwrap(evalFailure)));
				reply.whenComplete((value2, failure2) -> {
					if (unwrap(failure2) instanceof TimeoutException) {
						eval.cancel(false);
					}
				});
			}
			else {
				complete(reply, null, cause);
			}
		});
		CompletableFuture<Object> translated = new CompletableFuture<>();
		ReplyDeadlines.within(reply, TimeUnit.MILLISECONDS.toNanos(timeoutMillis)).whenComplete((value, failure) -> {
			Throwable cause = unwrap(failure);
			if (cause instanceof TimeoutException) {
				sha.cancel(false);
				translated.completeExceptionally(translate(
						new RedisCommandTimeoutException("Command timed out after " + timeoutMillis + " millisecond(s)")));
			}
			else if (cause != null) {
				translated.completeExceptionally(cause);
			}
			else {
				translated.complete(value);
			}
		});
		return translated;
	}

	private static void complete(CompletableFuture<Object> reply, @Nullable Object value, @Nullable Throwable failure) {
		if (failure == null) {
			reply.complete(value);
		}
		else {
			reply.completeExceptionally((failure instanceof RuntimeException runtime) ? translate(runtime) : failure);
		}
	}

	private static @Nullable Throwable unwrap(@Nullable Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/** Lettuce's exception as Spring's, as the template would have thrown it; the original stays the cause. */
	static RuntimeException translate(RuntimeException ex) {
		if (ex instanceof DataAccessException) {
			return ex;
		}
		DataAccessException translated = EXCEPTION_CONVERTER.convert(ex);
		return (translated != null) ? translated : ex;
	}

}
