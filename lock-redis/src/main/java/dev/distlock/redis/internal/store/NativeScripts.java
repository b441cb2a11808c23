package dev.distlock.redis.internal.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.distlock.redis.internal.script.NativeScriptArgs;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lettuce-native shortcut of one {@link LeaseStore}: lease scripts run straight on Lettuce's commands
 * ({@link LettuceScripts}), on the kept commands of the shared native connection when there are any
 * ({@link LettuceSharedCommands}), else on a connection of the factory. Why apart from the store: the store says which
 * script runs with which arguments and reads the reply; this class only says where a script runs, and every method
 * answers null when the shortcut does not apply, so that the store then takes the template.
 * <p>
 * Failures propagate as Lettuce's runtime exceptions; the store's callers translate them as the template does.
 * Invariant: {@link #enabled()} only ever goes from true to false, once a connection turned out not to be Lettuce's
 * (a racing call may still try the shortcut once and fall back); it never comes back on.
 */
final class NativeScripts {

	private final RedisConnectionFactory connectionFactory;

	/** The factory's command timeout in ms, 0 when unknown. */
	private final long timeoutMillis;

	/** False once a connection turned out not to be Lettuce's: from then on, scripts go through the template. */
	private volatile boolean enabled;

	/** The shared native connection's commands, kept between calls (null without Lettuce or on the template path). */
	private final @Nullable LettuceSharedCommands sharedCommands;

	NativeScripts(RedisConnectionFactory connectionFactory, long timeoutMillis, boolean enabled) {
		this.connectionFactory = connectionFactory;
		this.timeoutMillis = timeoutMillis;
		this.enabled = enabled;
		this.sharedCommands = enabled ? new LettuceSharedCommands(connectionFactory) : null;
	}

	/** Whether the shortcut may apply: a caller checks it before encoding arguments it would not need otherwise. */
	boolean enabled() {
		return this.enabled;
	}

	/** A lease script on one key with string arguments; null when the shortcut is off or does not apply. */
	@Nullable Object run(RedisScript<?> script, String redisKey, String... args) {
		if (!this.enabled) {
			return null;
		}
		return run(script, List.of(redisKey), NativeScriptArgs.encode(args));
	}

	/**
	 * A lease script with encoded arguments, for a caller that checked {@link #enabled()}: on the kept commands of the
	 * shared native connection when there are any, else on a connection of the factory; null when that connection is
	 * not Lettuce's, which turns the shortcut off.
	 */
	@Nullable Object run(RedisScript<?> script, List<String> redisKeys, byte[][] argv) {
		byte[][] keys = new byte[redisKeys.size()][];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = NativeScriptArgs.bytes(redisKeys.get(i));
		}
		Object kept = (this.sharedCommands != null) ? this.sharedCommands.current() : null;
		if (kept != null) {
			return LettuceScripts.run(kept, script, keys, argv, this.timeoutMillis);
		}
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Object nativeConnection = connection.getNativeConnection();
			Object reply = LettuceScripts.run(nativeConnection, script, keys, argv, this.timeoutMillis);
			if (reply == null) {
				this.enabled = false;
			}
			else if (this.sharedCommands != null) {
				this.sharedCommands.remember(nativeConnection);
			}
			return reply;
		}
	}

	/**
	 * A lease script on Lettuce's asynchronous commands, without waiting for Redis: null when not available (the
	 * shortcut off, or connections that do not share one native connection). The future completes on Lettuce's
	 * threads.
	 */
	@Nullable CompletableFuture<Object> runAsync(RedisScript<?> script, String redisKey, byte[][] argv) {
		if (!this.enabled || !LettuceScripts.sharesNativeConnection(this.connectionFactory)) {
			return null;
		}
		byte[][] keys = { NativeScriptArgs.bytes(redisKey) };
		long timeout = (this.timeoutMillis > 0) ? this.timeoutMillis : 60_000;
		Object kept = (this.sharedCommands != null) ? this.sharedCommands.current() : null;
		if (kept != null) {
			return LettuceScripts.runAsync(kept, script, keys, argv, timeout);
		}
		CompletableFuture<Object> reply;
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Object nativeConnection = connection.getNativeConnection();
			reply = LettuceScripts.runAsync(nativeConnection, script, keys, argv, timeout);
			if (reply != null && this.sharedCommands != null) {
				this.sharedCommands.remember(nativeConnection);
			}
		}
		if (reply == null) {
			this.enabled = false;
		}
		return reply;
	}

	/** The kept commands of the shared native connection the next call would use, or null (for tests). */
	@Nullable Object keptCommands() {
		return (this.sharedCommands != null) ? this.sharedCommands.current() : null;
	}

}
