package dev.distlock.sample.inventory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.sample.inventory.InventoryHttp.Response;
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

	private static final int ATTEMPTS = 160;

	private static final int CLIENTS = 16;

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
					// generous: CLIENTS purchases may queue for one SKU's lock on a loaded machine
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
		assertThat(result.sold()).as("sold").isEqualTo(STOCK);
		assertThat(result.remaining()).as("remaining").isZero();
		assertThat(result.orders()).as("orders").isEqualTo(result.sold());
		assertThat(result.receipts()).as("receipts").isEqualTo(result.sold());
		assertThat(result.soldOut()).as("sold-out answers").isEqualTo(ATTEMPTS - STOCK);
		assertThat(result.oversold()).as("oversold").isZero();
	}

	/** {@value #ATTEMPTS} purchases of one unit from {@value #CLIENTS} clients, round-robin over {@code targets}. */
	private static Result sell(String lock, List<InventoryHttp> targets) {
		String sku = "multi-" + lock + "-" + UUID.randomUUID().toString().substring(0, 8);
		assertThat(targets.get(0).setStock(sku, STOCK).status()).isEqualTo(200);
		AtomicInteger next = new AtomicInteger();
		AtomicInteger soldOut = new AtomicInteger();
		Map<String, Integer> receiptsByInstance = new HashMap<>();
		Set<Long> tokens = new HashSet<>();
		List<String> unexpected = new ArrayList<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int i = 0; i < CLIENTS; i++) {
				workers.add(pool.submit(() -> {
					start.await();
					for (int attempt = next.getAndIncrement(); attempt < ATTEMPTS; attempt = next.getAndIncrement()) {
						Response response = targets.get(attempt % targets.size()).purchase(sku, "quantity=1&lock=" + lock);
						synchronized (receiptsByInstance) {
							if (response.status() == 200) {
								receiptsByInstance.merge(response.text("instance"), 1, Integer::sum);
								if (response.json().has("fencingToken")) {
									tokens.add(response.number("fencingToken"));
								}
							}
							else if (response.status() == 409 && response.body().contains("sold-out")) {
								soldOut.incrementAndGet();
							}
							else {
								unexpected.add(response.toString());
							}
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> worker : workers) {
				worker.get(5, TimeUnit.MINUTES);
			}
		}
		catch (Exception ex) {
			throw new AssertionError("Purchases failed", ex);
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(unexpected).as("answers other than 200 and 409 sold-out").isEmpty();
		Response level = targets.get(0).level(sku);
		int receipts = receiptsByInstance.values().stream().mapToInt(Integer::intValue).sum();
		return new Result(level.number("initialStock"), level.number("stock"), level.number("sold"),
				level.number("orders"), receipts, soldOut.get(), Map.copyOf(receiptsByInstance), tokens.size());
	}

	record Result(long initialStock, long remaining, long sold, long orders, int receipts, int soldOut,
			Map<String, Integer> receiptsByInstance, int distinctTokens) {

		long oversold() {
			return this.sold + this.remaining - this.initialStock;
		}

	}

}
