package dev.distlock.sample.inventory;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The inventory service. Run several instances against one Redis and they sell the same stock without overselling,
 * because every purchase of a SKU holds that SKU's distributed lock.
 * <p>
 * With no Redis address configured it starts its own {@code redis-server} on a free loopback port (see
 * {@link dev.distlock.sample.inventory.redis.EmbeddedRedisAutoConfiguration}), so it runs on a bare machine.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class InventoryApplication {

	public static void main(String[] args) {
		SpringApplication.run(InventoryApplication.class, args);
	}

}
