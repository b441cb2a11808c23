package dev.distlock.sample.inventory;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.sample.inventory.ConcurrentSale.Result;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Two app instances (two application contexts, each with its own web server, lock service and JVM-local locks)
 * against one Redis, with concurrent purchases over HTTP spread round-robin over both, more than the stock. The
 * distributed lock sells exactly the stock; the same load without it oversells, and the same assertion catches it.
 */
class MultiInstanceIntegrationTests {

	private static final int STOCK = 40;

	/** 160 purchases of one unit from 16 clients. */
	private static final ConcurrentSale SALE = new ConcurrentSale(STOCK, 160, 16);

	private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private static final List<InventoryHttp> clients = new ArrayList<>();

	@BeforeAll
	static void startTwoInstances() {
		RedisServer redis = RedisServer.shared();
		for (String name : List.of("app-1", "app-2")) {
			ConfigurableApplicationContext context = new SpringApplicationBuilder(InventoryApplication.class).run(
					"--server.port=0", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--inventory.instance-id=" + name,
					// a wide window between read and write, so that unlocked purchases overlap on any machine
					"--inventory.processing-delay=10ms",
					// generous: all 16 clients' purchases may queue for one SKU's lock on a loaded machine
					"--inventory.lock.wait-time=60s", "--spring.main.banner-mode=off");
			instances.add(context);
			clients.add(new InventoryHttp(((WebServerApplicationContext) context).getWebServer().getPort()));
		}
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void distributedLockSellsExactlyTheStockAcrossInstances() {
		Result result = sell("distributed", clients);

		assertNeverOversold(result);
		assertThat(result.receiptsByInstance().keySet()).as("both instances sold").containsExactlyInAnyOrder("app-1", "app-2");
		assertThat(result.distinctTokens()).as("one lease per purchase").isEqualTo(STOCK);
	}

	@Test
	void withoutALockTheSameLoadOversellsAndTheSameAssertionFails() {
		Result result = sell("none", clients);

		assertThat(result.oversold()).as("oversold units").isPositive();
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertNeverOversold(result));
	}

	@Test
	void jvmLocalLockOversellsAcrossInstances() {
		Result result = sell("local", clients);

		assertThat(result.oversold()).as("oversold units").isPositive();
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertNeverOversold(result));
	}

	/** The local lock is not wrong, only not enough: alone, one instance behind it never oversells. */
	@Test
	void jvmLocalLockIsEnoughForASingleInstance() {
		assertNeverOversold(sell("local", List.of(clients.get(0))));
	}

	private static void assertNeverOversold(Result result) {
		SALE.assertNeverOversold(result);
	}

	private static Result sell(String lock, List<InventoryHttp> targets) {
		return SALE.sell(lock, targets);
	}

}
