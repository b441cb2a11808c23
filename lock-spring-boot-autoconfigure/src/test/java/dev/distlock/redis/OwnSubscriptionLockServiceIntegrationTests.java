package dev.distlock.redis;

import dev.distlock.redis.internal.pubsub.SubscriptionConnection;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock contract with release messages through the engine's own pub/sub connection ({@link SubscriptionConnection})
 * instead of Spring Data's {@code RedisMessageListenerContainer}, the default.
 */
@ExtendWith(RedisServerExtension.class)
class OwnSubscriptionLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forServer(server).paths(new EnginePaths(true, false));
	}

}
