package dev.distlock.sample.inventory;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Profile;

/**
 * The sample without any Redis, for a quick look on one machine, under the {@value #PROFILE} profile of
 * {@link TestInventoryApplication}: the stock in memory ({@link InMemoryInventory}), and, from
 * {@code application-in-memory.yml}, the locks on lock-test's in-memory engine ({@code distlock.in-memory.enabled})
 * with Boot's Redis auto-configuration left out. One instance only: these locks exclude nothing outside its JVM, which
 * the startup WARN and the {@code locks} health say.
 */
@TestConfiguration(proxyBeanMethods = false)
@Profile(InMemoryDevConfiguration.PROFILE)
@Import(InMemoryInventory.class)
public class InMemoryDevConfiguration {

	/** {@code -Dspring-boot.run.profiles=in-memory} with {@code spring-boot:test-run}. */
	public static final String PROFILE = "in-memory";

}
