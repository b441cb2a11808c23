package dev.distlock.redis;

import com.redis.testcontainers.RedisContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The lock contract against Redis in a container, where Docker is available: a twin of
 * {@link RedisProcessLockServiceIntegrationTests}, which runs everywhere.
 */
@Testcontainers(disabledWithoutDocker = true)
class ContainerRedisLockServiceIntegrationTests extends LockServiceContractTests {

	@Container
	static final RedisContainer redis = new RedisContainer(DockerImageName.parse("redis:7"));

	@Override
	protected LockTestSupport createSupport() {
		return new LockTestSupport(redis.getRedisHost(), redis.getRedisPort());
	}

}
