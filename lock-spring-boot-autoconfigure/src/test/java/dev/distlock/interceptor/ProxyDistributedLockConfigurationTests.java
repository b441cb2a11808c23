package dev.distlock.interceptor;

import dev.distlock.autoconfigure.LockProperties;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without Spring Boot, {@code @EnableDistributedLocks} applies the defaults of the starter's {@code distlock.*}
 * properties ({@link ProxyDistributedLockConfiguration}, in lock-core, cannot read {@link LockProperties}): the two
 * must not drift apart.
 */
class ProxyDistributedLockConfigurationTests {

	@Test
	void thePlainSpringDefaultsAreThePropertiesDefaults() {
		LockProperties properties = new LockProperties();
		assertThat(ProxyDistributedLockConfiguration.DEFAULT_TTL).isEqualTo(properties.getDefaultTtl());
		assertThat(ProxyDistributedLockConfiguration.DEFAULT_WAIT_TIME).isEqualTo(properties.getDefaultWaitTime());
		assertThat(ProxyDistributedLockConfiguration.ADVICE_ORDER).isEqualTo(properties.getAdviceOrder());
		assertThat(ProxyDistributedLockConfiguration.ON_LOST_LEASE).isEqualTo(properties.getOnLostLease());
	}

}
