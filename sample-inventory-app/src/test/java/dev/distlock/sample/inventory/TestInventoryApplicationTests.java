package dev.distlock.sample.inventory;

import dev.distlock.sample.inventory.InventoryHttp.Response;
import dev.distlock.sample.inventory.stock.InMemoryInventoryStore;
import dev.distlock.sample.inventory.stock.InventoryStore;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.testing.InMemoryLockService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dev launcher as {@code spring-boot:test-run} runs it, outside the test framework: the application's component
 * scan then sees every test class, yet only the private {@code redis-server} comes up (no container, no test's
 * configuration), the app sells on it, and it stops with the app. Under the {@code in-memory} profile, no Redis at all:
 * the app sells on lock-test's in-memory engine, and says loudly that it is one instance only.
 */
@ExtendWith(OutputCaptureExtension.class)
class TestInventoryApplicationTests {

	@Test
	void runsTheSampleOnAPrivateRedisServerThatStopsWithIt() {
		RedisServer server;
		try (ConfigurableApplicationContext context = TestInventoryApplication.application()
			.run("--server.port=0", "--spring.main.banner-mode=off")
			.getApplicationContext()) {
			server = context.getBean(RedisServer.class);
			InventoryHttp http = new InventoryHttp(((WebServerApplicationContext) context).getWebServer().getPort());
			assertThat(http.setStock("dev-sku", 3).status()).isEqualTo(200);

			Response receipt = http.purchase("dev-sku", "quantity=2");

			assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
			assertThat(server.execute("HGET", "inventory:{dev-sku}", "stock")).isEqualTo("1");
		}
		assertThat(server.isRunning()).isFalse();
	}

	@Test
	void runsTheSampleWithoutRedisUnderTheInMemoryProfileAndSaysItIsOneInstanceOnly(CapturedOutput output) {
		try (ConfigurableApplicationContext context = TestInventoryApplication.application()
			.run("--spring.profiles.active=" + InMemoryDevConfiguration.PROFILE, "--server.port=0",
					"--spring.main.banner-mode=off", "--management.endpoint.health.show-details=always")
			.getApplicationContext()) {
			assertThat(context.getBeanNamesForType(RedisServer.class)).isEmpty();
			assertThat(context.getBeanNamesForType(RedisConnectionFactory.class)).isEmpty();
			assertThat(context.getBeanNamesForType(InMemoryLockService.class)).hasSize(1);
			assertThat(context.getBean(InventoryStore.class)).isInstanceOf(InMemoryInventoryStore.class);
			assertThat(output).containsOnlyOnce("Locks run on the in-memory engine of dev.distlock:lock-test")
				.contains("NOT other instances of the application");
			InventoryHttp http = new InventoryHttp(((WebServerApplicationContext) context).getWebServer().getPort());
			assertThat(http.setStock("dev-sku", 3).status()).isEqualTo(200);

			Response receipt = http.purchase("dev-sku", "quantity=2");

			assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
			assertThat(http.level("dev-sku").number("stock")).isEqualTo(1);
			Response health = http.get("/actuator/health/locks");
			assertThat(health.status()).as(health.body()).isEqualTo(200);
			assertThat(health.json().at("/details/engine").asString()).isEqualTo("in-memory (single instance only)");
		}
	}

}
