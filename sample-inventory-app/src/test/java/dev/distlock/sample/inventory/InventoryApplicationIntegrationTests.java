package dev.distlock.sample.inventory;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.sample.inventory.InventoryHttp.Response;
import dev.distlock.sample.inventory.stock.InventoryStore;
import dev.distlock.sample.inventory.stock.LockMode;
import dev.distlock.sample.inventory.stock.Order;
import dev.distlock.sample.inventory.stock.StaleFencingTokenException;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The API of one instance over real HTTP, on a real Redis: purchases in every lock mode, sold out, bad input, a lock
 * held elsewhere, and a late write of a holder whose lease ended (at the store, and as a purchase over HTTP).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
		"inventory.instance-id=test-instance",
		// short, so the lock-busy test answers quickly; uncontended acquisitions never wait
		"inventory.lock.wait-time=300ms" })
@Import(SalePauses.class)
class InventoryApplicationIntegrationTests {

	private static final String PROBLEM_JSON = "application/problem+json";

	@LocalServerPort
	int port;

	@Autowired
	LockService locks;

	@Autowired
	InventoryStore store;

	@Autowired
	SalePauses pauses;

	InventoryHttp http;

	String sku;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> RedisServer.shared().host());
		registry.add("spring.data.redis.port", () -> RedisServer.shared().port());
	}

	@BeforeEach
	void setUp(TestInfo test) {
		this.http = new InventoryHttp(this.port);
		String method = test.getTestMethod().orElseThrow().getName();
		this.sku = method.substring(0, Math.min(40, method.length())) + "-" + UUID.randomUUID().toString().substring(0, 8);
	}

	@Test
	void setStockStartsANewLedgerAndReadsBack() {
		Response set = this.http.setStock(this.sku, 5);
		assertThat(set.status()).isEqualTo(200);
		assertThat(set.number("stock")).isEqualTo(5);
		assertThat(this.http.purchase(this.sku, "quantity=2").status()).isEqualTo(200);

		Response reset = this.http.setStock(this.sku, 7);
		assertThat(reset.number("initialStock")).isEqualTo(7);
		assertThat(reset.number("stock")).isEqualTo(7);
		assertThat(reset.number("sold")).isZero();
		assertThat(reset.number("orders")).isZero();
		assertThat(this.http.level(this.sku).body()).isEqualTo(reset.body());
	}

	@Test
	void purchaseUnderTheDistributedLockReturnsAReceiptWithItsFencingToken() {
		this.http.setStock(this.sku, 10);

		Response receipt = this.http.purchase(this.sku, "quantity=3");

		assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
		assertThat(receipt.text("sku")).isEqualTo(this.sku);
		assertThat(receipt.number("quantity")).isEqualTo(3);
		assertThat(receipt.number("remaining")).isEqualTo(7);
		assertThat(receipt.text("mode")).isEqualTo("distributed");
		assertThat(receipt.text("instance")).isEqualTo("test-instance");
		assertThat(receipt.number("fencingToken")).isPositive();
		Response level = this.http.level(this.sku);
		assertThat(level.number("stock")).isEqualTo(7);
		assertThat(level.number("sold")).isEqualTo(3);
		assertThat(level.number("orders")).isEqualTo(1);
		assertThat(level.number("oversold")).isZero();
		assertThat(level.number("fencingToken")).isEqualTo(receipt.number("fencingToken"));
		Response orders = this.http.orders(this.sku, "");
		assertThat(orders.json().get(0).get("orderId").asString()).isEqualTo(receipt.text("orderId"));
		assertThat(orders.json().get(0).get("fencingToken").asLong()).isEqualTo(receipt.number("fencingToken"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "none", "local", "distributed", "LOCAL" })
	void everyModeSellsWhenAlone(String lock) {
		this.http.setStock(this.sku, 3);

		Response receipt = this.http.purchase(this.sku, "lock=" + lock);

		assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
		assertThat(receipt.text("mode")).isEqualTo(LockMode.fromParameter(lock).parameterValue());
		assertThat(receipt.number("quantity")).isEqualTo(1);
		assertThat(this.http.level(this.sku).number("stock")).isEqualTo(2);
	}

	@Test
	void soldOutIsA409WithItsOwnProblemTypeAndStockNeverGoesNegative() {
		this.http.setStock(this.sku, 2);

		Response tooMany = this.http.purchase(this.sku, "quantity=3");
		assertThat(tooMany.status()).isEqualTo(409);
		assertThat(tooMany.contentType()).startsWith(PROBLEM_JSON);
		assertThat(tooMany.text("type")).isEqualTo("urn:distlock:inventory:problem:sold-out");
		assertThat(tooMany.number("requested")).isEqualTo(3);
		assertThat(tooMany.number("available")).isEqualTo(2);

		assertThat(this.http.purchase(this.sku, "quantity=2").status()).isEqualTo(200);
		Response soldOut = this.http.purchase(this.sku, "quantity=1");
		assertThat(soldOut.status()).isEqualTo(409);
		assertThat(soldOut.text("detail")).isEqualTo("SKU '" + this.sku + "' is sold out");
		assertThat(this.http.purchase(this.sku, "quantity=1&lock=none").status()).isEqualTo(409);

		Response level = this.http.level(this.sku);
		assertThat(level.number("stock")).isZero();
		assertThat(level.number("sold")).isEqualTo(2);
		assertThat(level.number("orders")).isEqualTo(1);
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			quantity=0                    | quantity | Quantity must be at least 1, but was 0
			quantity=-5                   | quantity | Quantity must be at least 1, but was -5
			quantity=abc                  | quantity | Parameter 'quantity' must be a whole number, but was 'abc'
			quantity=1.5                  | quantity | Parameter 'quantity' must be a whole number, but was '1.5'
			quantity=99999999999          | quantity | Parameter 'quantity' must be a whole number, but was '99999999999'
			lock=redlock                  | lock     | Parameter 'lock' must be one of none, local, distributed, but was 'redlock'
			""")
	void badPurchaseInputIsA400ThatSaysWhatIsWrong(String query, String parameter, String detail) {
		this.http.setStock(this.sku, 5);

		Response response = this.http.purchase(this.sku, query);

		assertThat(response.status()).isEqualTo(400);
		assertThat(response.contentType()).startsWith(PROBLEM_JSON);
		assertThat(response.text("type")).isEqualTo("urn:distlock:inventory:problem:invalid-request");
		assertThat(response.text("parameter")).isEqualTo(parameter);
		assertThat(response.text("detail")).isEqualTo(detail);
		assertThat(this.http.level(this.sku).number("stock")).isEqualTo(5);
	}

	@Test
	void purchaseOfAnUnknownSkuIsA400AndReadingItA404() {
		Response purchase = this.http.purchase(this.sku, "quantity=1");
		assertThat(purchase.status()).isEqualTo(400);
		assertThat(purchase.text("type")).isEqualTo("urn:distlock:inventory:problem:unknown-sku");
		assertThat(purchase.text("detail")).contains("Unknown SKU '" + this.sku + "'");

		Response read = this.http.level(this.sku);
		assertThat(read.status()).isEqualTo(404);
		assertThat(read.contentType()).startsWith(PROBLEM_JSON);
		assertThat(read.text("type")).isEqualTo("urn:distlock:inventory:problem:unknown-sku");
		assertThat(this.http.delete(this.sku).status()).isEqualTo(404);
	}

	@Test
	void malformedSkuIsA400BeforeAnyLockIsTaken() {
		Response response = this.http.purchase("bad%7Bsku%7D", "quantity=1");

		assertThat(response.status()).isEqualTo(400);
		assertThat(response.text("parameter")).isEqualTo("sku");
		assertThat(response.text("detail")).isEqualTo("SKU must be 1 to 64 letters, digits, '.', '_' or '-', but was 'bad{sku}'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"stock\": -1}", "{\"stock\": \"many\"}", "{}", "not json", "{\"stock\": 1000000001}" })
	void badStockIsA400(String body) {
		Response response = this.http.setStock(this.sku, body);

		assertThat(response.status()).as(response.body()).isEqualTo(400);
		assertThat(response.contentType()).startsWith(PROBLEM_JSON);
		assertThat(response.text("type")).isEqualTo("urn:distlock:inventory:problem:invalid-request");
		assertThat(this.http.level(this.sku).status()).isEqualTo(404);
	}

	@Test
	void lockHeldElsewhereForTheWholeWaitIsA409LockBusyAndSellsNothing() {
		this.http.setStock(this.sku, 5);

		try (Lease held = this.locks.acquire("inventory:" + this.sku, Duration.ofSeconds(30), Duration.ZERO)) {
			Response busy = this.http.purchase(this.sku, "quantity=1");

			assertThat(busy.status()).isEqualTo(409);
			assertThat(busy.contentType()).startsWith(PROBLEM_JSON);
			assertThat(busy.text("type")).isEqualTo("urn:distlock:inventory:problem:lock-busy");
			assertThat(busy.retryAfter()).isEqualTo("1");
			assertThat(busy.number("waitedMs")).isEqualTo(300);
			// the JVM-local and unlocked paths do not see the distributed lock: that is the point of the demo
			assertThat(this.http.purchase(this.sku, "lock=local").status()).isEqualTo(200);
		}

		assertThat(this.http.purchase(this.sku, "quantity=1").status()).isEqualTo(200);
		assertThat(this.http.level(this.sku).number("stock")).isEqualTo(3);
	}

	/**
	 * Holder A is paused past its lease; B gets the lock and sells; A wakes up and writes what it computed before the
	 * pause. The lock cannot stop A's late write, the store's fence does.
	 */
	@Test
	void lateWriteOfAHolderWhoseLeaseEndedIsRejectedByTheFence() {
		this.http.setStock(this.sku, 10);
		Lease stale = this.locks.acquire(LockRequest.of("inventory:" + this.sku, Duration.ofMillis(200), Duration.ZERO)
			.withFixedLease());
		long staleToken = stale.fencingToken();
		long stockSeenByStaleHolder = this.store.read(this.sku).orElseThrow().stock();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> !stale.isHeld());

			Response newer = this.http.purchase(this.sku, "quantity=1");
			assertThat(newer.status()).as(newer.body()).isEqualTo(200);
			assertThat(newer.number("fencingToken")).isGreaterThan(staleToken);

			Order late = new Order("late-order", 1, LockMode.DISTRIBUTED, staleToken, "paused-instance", Instant.now());
			assertThatThrownBy(() -> this.store.recordSale(this.sku, stockSeenByStaleHolder - 1, late, staleToken))
				.isInstanceOfSatisfying(StaleFencingTokenException.class, (ex) -> {
					assertThat(ex.getToken()).isEqualTo(staleToken);
					assertThat(ex.getStoredToken()).isEqualTo(newer.number("fencingToken"));
				});
			assertThatThrownBy(() -> this.store.reset(this.sku, 1000, staleToken))
				.isInstanceOf(StaleFencingTokenException.class);
		}
		finally {
			closeQuietly(stale);
		}
		Response level = this.http.level(this.sku);
		assertThat(level.number("stock")).isEqualTo(9);
		assertThat(level.number("sold")).isEqualTo(1);
		assertThat(level.number("orders")).isEqualTo(1);
		assertThat(level.number("fencingToken")).isGreaterThan(staleToken);
	}

	/**
	 * The same story over HTTP, with the real purchase as the stale holder: it reads and computes, is held before its
	 * write (as by a long GC pause), and its lease ends meanwhile; a second purchase gets the lock and sells. When the
	 * first one writes, the store's script refuses its token, and the client gets a 409 that says so.
	 */
	@Test
	void purchaseWhoseLeaseEndedBeforeItsWriteIsA409StaleFencingTokenAndSellsNothing() throws Exception {
		this.http.setStock(this.sku, 10);
		SalePauses.Pause pause = this.pauses.pauseNextSale(this.sku);
		ExecutorService client = Executors.newSingleThreadExecutor();
		try {
			Future<Response> stalePurchase = client.submit(() -> this.http.purchase(this.sku, "quantity=2"));
			long staleToken = pause.awaitReached(Duration.ofSeconds(60));
			// the lease ends while its holder is paused: here Redis loses it, as after an expiry or a failover
			assertThat(RedisServer.shared().execute("DEL", "lock:{inventory:" + this.sku + "}")).isEqualTo(1L);

			Response newer = this.http.purchase(this.sku, "quantity=1");
			assertThat(newer.status()).as(newer.body()).isEqualTo(200);
			long newerToken = newer.number("fencingToken");
			assertThat(newerToken).isGreaterThan(staleToken);
			pause.resume();
			Response stale = stalePurchase.get(60, TimeUnit.SECONDS);

			assertThat(stale.status()).as(stale.body()).isEqualTo(409);
			assertThat(stale.contentType()).startsWith(PROBLEM_JSON);
			assertThat(stale.text("type")).isEqualTo("urn:distlock:inventory:problem:stale-fencing-token");
			assertThat(stale.text("title")).isEqualTo("Stale fencing token");
			assertThat(stale.text("detail")).isEqualTo("Write to SKU '" + this.sku + "' with fencing token " + staleToken
					+ " rejected: a newer lock holder (token " + newerToken + ") has already written it; nothing was sold");
			assertThat(stale.text("sku")).isEqualTo(this.sku);
			assertThat(stale.number("fencingToken")).isEqualTo(staleToken);
			assertThat(stale.number("storedFencingToken")).isEqualTo(newerToken);
			Response level = this.http.level(this.sku);
			assertThat(level.number("stock")).as("the newer sale's stock, not the stale one's 8").isEqualTo(9);
			assertThat(level.number("sold")).isEqualTo(1);
			assertThat(level.number("orders")).isEqualTo(1);
			assertThat(level.number("fencingToken")).isEqualTo(newerToken);
			assertThat(this.http.orders(this.sku, "").json()).singleElement()
				.satisfies((order) -> assertThat(order.get("orderId").asString()).isEqualTo(newer.text("orderId")));
		}
		finally {
			pause.resume();
			client.shutdownNow();
		}
	}

	@Test
	void ordersListsTheNewestInLedgerOrderAndChecksItsLimit() {
		this.http.setStock(this.sku, 5);
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.purchase(this.sku, "lock=none").status()).isEqualTo(200);
		}

		assertThat(this.http.orders(this.sku, "limit=2").json()).hasSize(2);
		assertThat(this.http.orders(this.sku, "").json()).hasSize(3);
		assertThat(this.http.orders(this.sku, "limit=0").status()).isEqualTo(400);
	}

	@Test
	void deleteRemovesTheSkuAndItsOrders() {
		this.http.setStock(this.sku, 5);
		this.http.purchase(this.sku, "");

		assertThat(this.http.delete(this.sku).status()).isEqualTo(204);

		assertThat(this.http.level(this.sku).status()).isEqualTo(404);
		assertThat(this.store.recentOrders(this.sku, 10)).isEmpty();
	}

	private static void closeQuietly(Lease lease) {
		try {
			lease.close();
		}
		catch (RuntimeException expected) {
			// the lease expired on purpose
		}
	}

}
