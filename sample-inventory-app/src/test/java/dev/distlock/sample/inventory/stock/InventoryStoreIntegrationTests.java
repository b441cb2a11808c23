package dev.distlock.sample.inventory.stock;

import java.time.Instant;
import java.util.UUID;

import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The store's scripts on a real Redis: the ledger, and the fence that refuses writes of older lock holders. */
@ExtendWith(RedisServerExtension.class)
class InventoryStoreIntegrationTests {

	private static LettuceConnectionFactory connectionFactory;

	private static InventoryStore store;

	private String sku;

	@BeforeAll
	static void connect(RedisServer redis) {
		connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		StringRedisTemplate template = new StringRedisTemplate(connectionFactory);
		store = new InventoryStore(template, "inventory", JsonMapper.builder().build());
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void newSku() {
		this.sku = "sku-" + UUID.randomUUID().toString().substring(0, 8);
	}

	@Test
	void unknownSkuReadsEmptyAndCannotBeSold() {
		assertThat(store.read(this.sku)).isEmpty();
		assertThatThrownBy(() -> store.recordSale(this.sku, 1, order(1, null), null)).isInstanceOf(UnknownSkuException.class);
		assertThat(store.read(this.sku)).isEmpty();
	}

	@Test
	void keysShareOneClusterSlotPerSku() {
		assertThat(store.stockKey("a-1")).isEqualTo("inventory:{a-1}");
		assertThat(store.ordersKey("a-1")).isEqualTo("inventory:{a-1}:orders");
	}

	@Test
	void saleWritesTheStockAndAppendsToTheLedgerInOneStep() {
		store.reset(this.sku, 10, null);

		store.recordSale(this.sku, 7, order(3, null), null);

		StockLevel level = store.read(this.sku).orElseThrow();
		assertThat(level).isEqualTo(new StockLevel(this.sku, 10, 7, 3, 1, null));
		assertThat(level.oversold()).isZero();
		assertThat(store.recentOrders(this.sku, 10)).singleElement().satisfies((order) -> {
			assertThat(order.quantity()).isEqualTo(3);
			assertThat(order.mode()).isEqualTo(LockMode.NONE);
		});
	}

	/** The stock is written as computed, so two sales from the same read lose one update, and the ledger shows it. */
	@Test
	void twoSalesComputedFromTheSameReadOversellAndTheLedgerShowsIt() {
		store.reset(this.sku, 10, null);
		long seenByBoth = store.read(this.sku).orElseThrow().stock();

		store.recordSale(this.sku, seenByBoth - 1, order(1, null), null);
		store.recordSale(this.sku, seenByBoth - 1, order(1, null), null);

		StockLevel level = store.read(this.sku).orElseThrow();
		assertThat(level.stock()).isEqualTo(9);
		assertThat(level.sold()).isEqualTo(2);
		assertThat(level.orders()).isEqualTo(2);
		assertThat(level.oversold()).isEqualTo(1);
	}

	@Test
	void writeWithAnOlderTokenIsRejectedAndWritesNothing() {
		store.reset(this.sku, 10, 100L);
		store.recordSale(this.sku, 9, order(1, 200L), 200L);

		assertThatThrownBy(() -> store.recordSale(this.sku, 5, order(5, 150L), 150L))
			.isInstanceOfSatisfying(StaleFencingTokenException.class, (ex) -> {
				assertThat(ex.getToken()).isEqualTo(150);
				assertThat(ex.getStoredToken()).isEqualTo(200);
			});
		assertThatThrownBy(() -> store.reset(this.sku, 100, 199L)).isInstanceOf(StaleFencingTokenException.class);
		assertThatThrownBy(() -> store.delete(this.sku, 1L)).isInstanceOf(StaleFencingTokenException.class);

		assertThat(store.read(this.sku).orElseThrow()).isEqualTo(new StockLevel(this.sku, 10, 9, 1, 1, 200L));
	}

	/** A re-entered lease keeps its token, so it can write twice; a newer holder's token is larger. */
	@Test
	void writeWithTheSameOrANewerTokenIsAccepted() {
		store.reset(this.sku, 10, 100L);

		store.recordSale(this.sku, 9, order(1, 100L), 100L);
		store.recordSale(this.sku, 8, order(1, 100L), 100L);
		store.recordSale(this.sku, 7, order(1, 101L), 101L);

		assertThat(store.read(this.sku).orElseThrow()).isEqualTo(new StockLevel(this.sku, 10, 7, 3, 3, 101L));
	}

	/** Lua numbers are doubles: 2^53 + 1 and 2^53 are equal as doubles, but not as tokens. */
	@Test
	void tokensAreComparedExactlyBeyondDoublePrecision() {
		long big = (1L << 53) + 1;
		store.reset(this.sku, 10, big);

		assertThatThrownBy(() -> store.recordSale(this.sku, 9, order(1, big - 1), big - 1))
			.isInstanceOf(StaleFencingTokenException.class);
		store.recordSale(this.sku, 9, order(1, Long.MAX_VALUE), Long.MAX_VALUE);
		assertThat(store.read(this.sku).orElseThrow().fencingToken()).isEqualTo(Long.MAX_VALUE);
	}

	/** The unlocked modes have no token; their writes are not checked, which is how they show the bug. */
	@Test
	void writeWithoutATokenIsNotCheckedAndKeepsTheFence() {
		store.reset(this.sku, 10, 500L);

		store.recordSale(this.sku, 9, order(1, null), null);

		assertThat(store.read(this.sku).orElseThrow()).isEqualTo(new StockLevel(this.sku, 10, 9, 1, 1, 500L));
	}

	@Test
	void resetStartsANewLedgerAndKeepsTheHighestFence() {
		store.reset(this.sku, 10, 300L);
		store.recordSale(this.sku, 9, order(1, 300L), 300L);

		StockLevel level = store.reset(this.sku, 20, null);

		assertThat(level).isEqualTo(new StockLevel(this.sku, 20, 20, 0, 0, 300L));
		assertThat(store.recentOrders(this.sku, 10)).isEmpty();
	}

	@Test
	void negativeStockIsNeverWritten() {
		store.reset(this.sku, 1, null);

		assertThatIllegalArgumentException().isThrownBy(() -> store.recordSale(this.sku, -1, order(2, null), null));
		assertThatThrownBy(() -> store.reset(this.sku, -1, null)).isInstanceOf(InvalidRequestException.class);
		assertThat(store.read(this.sku).orElseThrow().stock()).isEqualTo(1);
	}

	@Test
	void deleteRemovesStockAndOrders() {
		store.reset(this.sku, 3, null);
		store.recordSale(this.sku, 2, order(1, null), null);

		assertThat(store.delete(this.sku, null)).isTrue();

		assertThat(store.read(this.sku)).isEmpty();
		assertThat(store.recentOrders(this.sku, 10)).isEmpty();
		assertThat(store.delete(this.sku, null)).isFalse();
	}

	private static Order order(int quantity, Long token) {
		return new Order(UUID.randomUUID().toString(), quantity, (token != null) ? LockMode.DISTRIBUTED : LockMode.NONE,
				token, "test", Instant.now());
	}

}
