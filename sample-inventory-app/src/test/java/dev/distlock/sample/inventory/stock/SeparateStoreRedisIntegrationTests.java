package dev.distlock.sample.inventory.stock;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.sample.inventory.InventoryApplication;
import dev.distlock.sample.inventory.InventoryHttp;
import dev.distlock.sample.inventory.InventoryHttp.Response;
import dev.distlock.sample.inventory.SalePauses;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code inventory.store.redis-url}: the locks on one real Redis ({@code spring.data.redis.*}), stock and orders on
 * another. A purchase is held before its write, so both servers can be looked at while it holds its lock.
 */
class SeparateStoreRedisIntegrationTests {

	private static RedisServer lockRedis;

	private static RedisServer storeRedis;

	private static ConfigurableApplicationContext app;

	private static InventoryHttp http;

	/** Servers first and the app last, so that the app never runs against a stopped server. */
	@BeforeAll
	static void start() {
		lockRedis = RedisServer.start();
		storeRedis = RedisServer.start();
		app = new SpringApplicationBuilder(InventoryApplication.class, SalePauses.class).run("--server.port=0",
				"--spring.data.redis.host=" + lockRedis.host(), "--spring.data.redis.port=" + lockRedis.port(),
				"--inventory.store.redis-url=" + storeRedis.uri() + "/0", "--inventory.instance-id=separate-store",
				"--spring.main.banner-mode=off");
		http = new InventoryHttp(((WebServerApplicationContext) app).getWebServer().getPort());
	}

	@AfterAll
	static void stop() {
		try {
			if (app != null) {
				app.close();
			}
		}
		finally {
			if (lockRedis != null) {
				lockRedis.close();
			}
			if (storeRedis != null) {
				storeRedis.close();
			}
		}
	}

	@Test
	void locksGoToTheLockRedisAndStockAndOrdersToTheStoreRedis() throws Exception {
		String sku = "separate-" + UUID.randomUUID().toString().substring(0, 8);
		String lockKey = "lock:{inventory:" + sku + "}";
		String stockKey = "inventory:{" + sku + "}";
		String ordersKey = stockKey + ":orders";
		assertThat(http.setStock(sku, 10).status()).isEqualTo(200);
		SalePauses.Pause pause = app.getBean(SalePauses.class).pauseNextSale(sku);
		ExecutorService client = Executors.newSingleThreadExecutor();
		long token;
		try {
			Future<Response> purchase = client.submit(() -> http.purchase(sku, "quantity=3"));
			token = pause.awaitReached(Duration.ofSeconds(60));

			// while the purchase holds its lock: the lease is on the lock Redis only, the stock on the store Redis only
			assertThat(lockRedis.execute("HGET", lockKey, "~t")).isEqualTo(Long.toString(token));
			assertThat(storeRedis.execute("EXISTS", lockKey)).isEqualTo(0L);
			assertThat(storeRedis.execute("HGET", stockKey, "stock")).isEqualTo("10");
			assertThat(lockRedis.execute("EXISTS", stockKey)).isEqualTo(0L);

			pause.resume();
			Response receipt = purchase.get(60, TimeUnit.SECONDS);
			assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
			assertThat(receipt.number("fencingToken")).isEqualTo(token);
		}
		finally {
			pause.resume();
			client.shutdownNow();
		}

		assertThat(storeRedis.execute("HMGET", stockKey, "stock", "sold", "fence"))
			.isEqualTo(List.of("7", "3", Long.toString(token)));
		assertThat(storeRedis.execute("LLEN", ordersKey)).isEqualTo(1L);
		assertThat(storeRedis.execute("KEYS", "lock:*")).as("lock keys on the store Redis").isEqualTo(List.of());
		assertThat(lockRedis.execute("KEYS", "inventory:*")).as("store keys on the lock Redis").isEqualTo(List.of());
		assertThat(lockRedis.execute("EXISTS", lockKey)).as("released").isEqualTo(0L);
		Response level = http.level(sku);
		assertThat(level.number("stock")).isEqualTo(7);
		assertThat(level.number("sold")).isEqualTo(3);
		assertThat(level.number("orders")).isEqualTo(1);
	}

	/** The store's server is what the API reads: data written there directly shows up, the lock server's does not. */
	@Test
	void theApiReadsStockFromTheStoreRedis() {
		String sku = "direct-" + UUID.randomUUID().toString().substring(0, 8);
		String stockKey = "inventory:{" + sku + "}";
		try {
			lockRedis.execute("HSET", stockKey, "stock", "99", "initial", "99", "sold", "0");
			assertThat(http.level(sku).status()).isEqualTo(404);

			storeRedis.execute("HSET", stockKey, "stock", "4", "initial", "5", "sold", "1");

			Response level = http.level(sku);
			assertThat(level.status()).isEqualTo(200);
			assertThat(level.number("stock")).isEqualTo(4);
			assertThat(level.number("initialStock")).isEqualTo(5);
		}
		finally {
			lockRedis.execute("DEL", stockKey);
			storeRedis.execute("DEL", stockKey);
		}
	}

}
