package dev.distlock.redis;

import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/** The lock contract against a {@code redis-server} process: the one on PATH (Redis 7 in CI), else the embedded one. */
@ExtendWith(RedisServerExtension.class)
class RedisProcessLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forServer(server);
	}

}
