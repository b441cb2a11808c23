package dev.distlock.sample.inventory;

import java.time.Duration;

import dev.distlock.sample.inventory.InventoryHttp.Response;
import dev.distlock.sample.inventory.monitoring.LostLockAlerts;
import dev.distlock.sample.inventory.stock.InMemoryInventoryStore;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.LockScenarios;
import dev.distlock.testing.autoconfigure.AutoConfigureInMemoryLocks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static dev.distlock.testing.LockAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The purchase's answers when its lock is not simply free, over real HTTP, in a second and with no Redis at all: the
 * locks on lock-test's in-memory engine ({@code @AutoConfigureInMemoryLocks}), whose scenarios play the other
 * instances and Redis, and the stock in memory ({@link InMemoryInventory}). Boot's Redis auto-configuration is left
 * out, so nothing here could reach a Redis; the same cases on a real Redis are in
 * {@link InventoryApplicationIntegrationTests}.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		// short, so the lock-busy answer comes quickly
		"inventory.lock.wait-time=300ms",
		"management.endpoint.health.show-details=always",
		"spring.autoconfigure.exclude=org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
@AutoConfigureInMemoryLocks
@Import(InMemoryInventory.class)
class InventoryLockingTests {

	private static final String SKU = "sku-42";

	/** The SKU's lock key, as {@code @DistributedLock(key = "'inventory:' + #sku")} evaluates it. */
	private static final String KEY = "inventory:sku-42";

	@LocalServerPort
	int port;

	@Autowired
	LockScenarios locks;

	@Autowired
	InMemoryInventoryStore store;

	InventoryHttp http;

	@BeforeEach
	void fiveInStock() {
		this.http = new InventoryHttp(this.port);
		this.store.clear();
		this.store.reset(SKU, 5, null);
	}

	@Test
	void aPurchaseAnswersLockBusyWhileAnotherInstanceHoldsTheSku() {
		this.locks.holdElsewhere(KEY, Duration.ofSeconds(5));

		Response busy = this.http.purchase(SKU, "quantity=1");

		assertThat(busy.status()).as(busy.body()).isEqualTo(409);
		assertThat(busy.text("type")).isEqualTo("urn:distlock:inventory:problem:lock-busy");
		assertThat(busy.text("lock")).isEqualTo(KEY);
		assertThat(busy.number("waitedMs")).isEqualTo(300);
		assertThat(busy.retryAfter()).isEqualTo("1");
		assertThat(this.store.read(SKU).orElseThrow().stock()).as("nothing sold").isEqualTo(5);
		assertThat(this.locks).wasBusy(KEY).neverLocked(KEY);
	}

	@Test
	void aPurchaseAnswersLockLostWhenTheLeaseIsLostMidPurchase(@Autowired MeterRegistry meters) {
		double alerted = lostAlerts(meters);
		this.store.beforeNextSale(SKU, () -> this.locks.loseNow(KEY));

		Response lost = this.http.purchase(SKU, "quantity=2");

		assertThat(lost.status()).as(lost.body()).isEqualTo(503);
		assertThat(lost.text("type")).isEqualTo("urn:distlock:inventory:problem:lock-lost");
		assertThat(lost.text("lock")).isEqualTo(KEY);
		// the write landed before the release found the lease lost: why the answer says to read the SKU before retrying
		assertThat(this.http.level(SKU).number("stock")).isEqualTo(3);
		assertThat(this.locks).acquired(KEY).times(1).lost(KEY).releasedEverything();
		// the application's own alert heard of it (the LockLostEvent comes on the engine's event thread)
		await().atMost(Duration.ofSeconds(30)).until(() -> lostAlerts(meters) == alerted + 1);
	}

	@Test
	void aPurchaseLocksTheSkuOnceAndWritesWithItsFencingToken() {
		Response receipt = this.http.purchase(SKU, "quantity=1");

		assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
		assertThat(receipt.number("remaining")).isEqualTo(4);
		assertThat(this.locks).acquired(KEY).times(1).releasedEverything();
		assertThat(this.locks.lockedKeys()).containsExactly(KEY);
		assertThat(this.locks.history().entries(KEY)).first()
			.satisfies((acquired) -> assertThat(acquired.fencingToken()).isEqualTo(receipt.number("fencingToken")));
		assertThat(this.store.read(SKU).orElseThrow().fencingToken()).isEqualTo(receipt.number("fencingToken"));
	}

	@Test
	void noRedisIsThereAndTheHealthNamesTheEngine(@Autowired ApplicationContext context) {
		assertThat(context.getBeanNamesForType(RedisConnectionFactory.class)).isEmpty();
		assertThat(context.getBeanNamesForType(RedisServer.class)).isEmpty();
		assertThat(context.getBeanNamesForType(InMemoryLockService.class)).hasSize(1);

		Response health = this.http.get("/actuator/health");

		assertThat(health.status()).as(health.body()).isEqualTo(200);
		assertThat(health.json().get("components").has("redis")).isFalse();
		assertThat(health.json().at("/components/locks/details/engine").asString())
			.isEqualTo("in-memory (single instance only)");
	}

	private static double lostAlerts(MeterRegistry meters) {
		return meters.find(LostLockAlerts.COUNTER).counters().stream().mapToDouble(Counter::count).sum();
	}

}
