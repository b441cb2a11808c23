package dev.distlock.sample.inventory;

import org.springframework.boot.SpringApplication;

/**
 * Runs the sample against a Redis container, for developers with Docker:
 * {@code ./mvnw -pl sample-inventory-app -am spring-boot:test-run}. Not a test.
 */
public class TestInventoryApplication {

	public static void main(String[] args) {
		SpringApplication.from(InventoryApplication::main).with(ContainersConfig.class).run(args);
	}

}
