package dev.distlock.sample.inventory;

import dev.distlock.sample.inventory.InventoryHttp.Response;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dev launcher as {@code spring-boot:test-run} runs it, outside the test framework: the application's component
 * scan then sees every test class, yet only the private {@code redis-server} comes up (no container, no test's
 * configuration), the app sells on it, and it stops with the app.
 */
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

}
