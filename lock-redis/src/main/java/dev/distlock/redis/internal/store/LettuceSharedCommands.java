package dev.distlock.redis.internal.store;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The asynchronous commands of a Lettuce factory's shared native connection, kept between lease script calls.
 * <p>
 * Why: on a shared connection every {@code getConnection()} builds a Spring {@code LettuceConnection} (two dozen objects
 * and two logger look-ups) only to hand back the same native commands; that was the largest part of the client's work
 * per uncontended acquire and release beyond the two script calls. The kept commands are used only while they are
 * exactly what {@code getConnection()} would hand out: the factory runs, shares its native connection and does not
 * validate it per call (validation may replace it), and the kept connection is open (Lettuce marks it closed once the
 * factory resets or replaces it, and inactive while disconnected). Otherwise the caller goes through the factory as
 * before and offers the commands it got there with {@link #remember}. Loaded only when Lettuce is present.
 */
final class LettuceSharedCommands {

	private final @Nullable LettuceConnectionFactory factory;

	/** The last commands handed out by the factory on its shared connection, with that connection; or null. */
	private volatile @Nullable Kept kept;

	LettuceSharedCommands(RedisConnectionFactory connectionFactory) {
		this.factory = (connectionFactory instanceof LettuceConnectionFactory lettuce) ? lettuce : null;
	}

	/**
	 * {@return the kept commands of the shared native connection, or null when the caller must get a connection from
	 * the factory}
	 */
	@Nullable Object current() {
		Kept current = this.kept;
		if (current == null || !current.connection.isOpen() || !usable()) {
			return null;
		}
		return current.commands;
	}

	/**
	 * Keep {@code nativeConnection}, the native commands of a connection just obtained from the factory, when they are
	 * those of its shared native connection.
	 */
	void remember(Object nativeConnection) {
		if (!usable()) {
			return;
		}
		StatefulConnection<?, ?> connection = (nativeConnection instanceof RedisAsyncCommands<?, ?> single)
				? single.getStatefulConnection()
				: (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster)
						? cluster.getStatefulConnection() : null;
		if (connection != null) {
			this.kept = new Kept(connection, nativeConnection);
		}
	}

	private boolean usable() {
		LettuceConnectionFactory lettuce = this.factory;
		return lettuce != null && lettuce.getShareNativeConnection() && !lettuce.getValidateConnection()
				&& lettuce.isRunning();
	}

	private record Kept(StatefulConnection<?, ?> connection, Object commands) {
	}

}
