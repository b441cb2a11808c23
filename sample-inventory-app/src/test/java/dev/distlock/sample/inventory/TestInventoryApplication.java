package dev.distlock.sample.inventory;

import org.springframework.boot.SpringApplication;

/**
 * Runs the sample for development on a machine without Redis:
 * {@code ./mvnw -pl sample-inventory-app -am spring-boot:test-run} starts a private {@code redis-server} for it
 * ({@link DevRedisConfiguration}), or with {@code -Dspring-boot.run.profiles=container} a Redis container (Docker,
 * {@link ContainersConfig}), or with {@code -Dspring-boot.run.profiles=in-memory} no Redis at all: locks and stock in
 * memory, one instance only ({@link InMemoryDevConfiguration}). Not a test, and not part of the application: that one
 * connects where {@code spring.data.redis.*} says.
 */
public class TestInventoryApplication {

	public static void main(String[] args) {
		application().run(args);
	}

	/** The application with its dev-time Redis (or none, in memory), as {@link #main} runs it. */
	static SpringApplication.Augmented application() {
		return SpringApplication.from(InventoryApplication::main)
			.with(DevRedisConfiguration.class, ContainersConfig.class, InMemoryDevConfiguration.class);
	}

}
