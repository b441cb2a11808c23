package dev.distlock.redis;

import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock contract on Lettuce with the engine's template-only Redis path: lease scripts through
 * {@code RedisTemplate}, renewals pipelined through Spring Data's pipeline, no Lettuce-native shortcut.
 */
@ExtendWith(RedisServerExtension.class)
class TemplatePathLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forServer(server).paths(new EnginePaths(false, true));
	}

}
