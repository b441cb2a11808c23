package dev.distlock.sample.inventory;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The inventory service. Run several instances against one Redis and they sell the same stock without overselling,
 * because every purchase of a SKU holds that SKU's distributed lock.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class InventoryApplication {

	public static void main(String[] args) {
		SpringApplication.run(InventoryApplication.class, args);
	}

}
