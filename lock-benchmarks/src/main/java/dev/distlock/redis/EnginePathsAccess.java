package dev.distlock.redis;

/**
 * The benchmark's door to {@link EnginePaths}, the engine's package-private switch between its Redis paths and pub/sub
 * connections (issue 11's side-by-side measurements); not part of the library.
 */
public final class EnginePathsAccess {

	private EnginePathsAccess() {
	}

	/**
	 * Set the engine's paths on {@code builder}.
	 * @param builder the service's builder
	 * @param nativeScripts lease scripts and renewals on Lettuce's own commands
	 * @param listenerContainer release messages through Spring Data's {@code RedisMessageListenerContainer}
	 * @return the builder
	 */
	public static RedisLockServiceBuilder paths(RedisLockServiceBuilder builder, boolean nativeScripts,
			boolean listenerContainer) {
		return builder.paths(new EnginePaths(nativeScripts, listenerContainer));
	}

}
