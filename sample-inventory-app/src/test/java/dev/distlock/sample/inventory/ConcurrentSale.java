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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * More purchases of one unit than the stock, over real HTTP from several clients that start together, round-robin
 * over the targets: what the multi-instance and the AOT tests sell, and the assertion that nothing was oversold.
 *
 * @param stock the SKU's stock
 * @param attempts how many purchases are made
 * @param clients how many clients make them at once
 */
record ConcurrentSale(int stock, int attempts, int clients) {

	/** Purchases that did not answer within this fail the sale. */
	private static final long DEADLINE_MINUTES = 5;

	/** Sell a new SKU with {@code lock} ({@code distributed}, {@code local} or {@code none}) through {@code targets}. */
	Result sell(String lock, List<InventoryHttp> targets) {
		String sku = "sale-" + lock + "-" + UUID.randomUUID().toString().substring(0, 8);
		assertThat(targets.get(0).setStock(sku, this.stock).status()).isEqualTo(200);
		AtomicInteger next = new AtomicInteger();
		AtomicInteger soldOut = new AtomicInteger();
		Map<String, Integer> receiptsByInstance = new HashMap<>();
		Set<Long> tokens = new HashSet<>();
		List<String> unexpected = new ArrayList<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(this.clients);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int i = 0; i < this.clients; i++) {
				workers.add(pool.submit(() -> {
					start.await();
					for (int attempt = next.getAndIncrement(); attempt < this.attempts; attempt = next.getAndIncrement()) {
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
				worker.get(DEADLINE_MINUTES, TimeUnit.MINUTES);
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

	/** Exactly the stock sold, once each, every other attempt answered sold-out, nothing oversold. */
	void assertNeverOversold(Result result) {
		assertThat(result.sold()).as("sold").isEqualTo(this.stock);
		assertThat(result.remaining()).as("remaining").isZero();
		assertThat(result.orders()).as("orders").isEqualTo(result.sold());
		assertThat(result.receipts()).as("receipts").isEqualTo(result.sold());
		assertThat(result.soldOut()).as("sold-out answers").isEqualTo(this.attempts - this.stock);
		assertThat(result.oversold()).as("oversold").isZero();
	}

	/** What a sale did, by the SKU's ledger and by the answers. */
	record Result(long initialStock, long remaining, long sold, long orders, int receipts, int soldOut,
			Map<String, Integer> receiptsByInstance, int distinctTokens) {

		long oversold() {
			return this.sold + this.remaining - this.initialStock;
		}

	}

}
