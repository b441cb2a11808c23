package dev.distlock.redis.internal.pubsub;

/**
 * Makes the connections' threads (a blocking client's subscription, a Jedis master's reader): the engine passes its
 * own thread maker, so that these threads come from the application's thread factory and are named by their role
 * like the engine's others, without this package depending on the engine.
 */
@FunctionalInterface
public interface PubSubThreads {

	/**
	 * A new, unstarted thread named {@code name} that runs {@code task}.
	 * @param name the thread's name
	 * @param task what it runs
	 * @return the thread, not started
	 */
	Thread newThread(String name, Runnable task);

}
