package dev.distlock.sample.inventory.stock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.Assert;

/**
 * The sample's stock and orders in memory, for its fast tests and its run without Redis: the rules of the Redis store
 * ({@link InventoryStore}, whose Lua scripts they follow), each call atomic, the fence included: a write with a
 * fencing token older than the last one that wrote the SKU is refused. It extends the Redis store only to take its
 * place: every public method that touches the store is overridden here, and none of the Redis code runs (its template
 * has no connection).
 * <p>
 * A test may run code just before a sale is written, inside the purchase and its lock:
 * {@link #beforeNextSale(String, Runnable)}.
 */
public class InMemoryInventoryStore extends InventoryStore {

	private final Map<String, Sku> skus = new HashMap<>();

	private final Map<String, Runnable> beforeNextSale = new ConcurrentHashMap<>();

	public InMemoryInventoryStore() {
		super(new StringRedisTemplate(), "inventory", JsonMapper.builder().build());
	}

	/** Run {@code action} when the next sale of {@code sku} is about to be written (once), on the purchase's thread. */
	public void beforeNextSale(String sku, Runnable action) {
		this.beforeNextSale.put(sku, action);
	}

	/** Forget every SKU and every armed action. */
	public synchronized void clear() {
		this.skus.clear();
		this.beforeNextSale.clear();
	}

	@Override
	public synchronized Optional<StockLevel> read(String sku) {
		Sku state = this.skus.get(sku);
		return (state != null) ? Optional.of(state.level(sku)) : Optional.empty();
	}

	@Override
	public void recordSale(String sku, long newStock, Order order, @Nullable Long fencingToken) {
		Assert.isTrue(newStock >= 0, () -> "Stock must never be negative, but was " + newStock + " for '" + sku + "'");
		Runnable action = this.beforeNextSale.remove(sku);
		if (action != null) {
			action.run();
		}
		synchronized (this) {
			Sku state = this.skus.get(sku);
			if (state == null) {
				throw new UnknownSkuException(sku);
			}
			state.fence(sku, fencingToken);
			state.stock = newStock;
			state.sold += order.quantity();
			state.orders.add(order);
		}
	}

	@Override
	public synchronized StockLevel reset(String sku, long stock, @Nullable Long fencingToken) {
		Sku state = this.skus.computeIfAbsent(sku, (key) -> new Sku());
		state.fence(sku, fencingToken);
		state.initial = Skus.requireValidStock(stock);
		state.stock = stock;
		state.sold = 0;
		state.orders.clear();
		return state.level(sku);
	}

	@Override
	public synchronized boolean delete(String sku, @Nullable Long fencingToken) {
		Sku state = this.skus.get(sku);
		if (state == null) {
			return false;
		}
		state.checkFence(sku, fencingToken);
		this.skus.remove(sku);
		return true;
	}

	@Override
	public synchronized List<Order> recentOrders(String sku, int limit) {
		Sku state = this.skus.get(sku);
		if (limit <= 0 || state == null) {
			return List.of();
		}
		List<Order> orders = state.orders;
		return List.copyOf(orders.subList(Math.max(0, orders.size() - limit), orders.size()));
	}

	/** One SKU's hash and order list. */
	private static final class Sku {

		long initial;

		long stock;

		long sold;

		@Nullable Long fence;

		final List<Order> orders = new ArrayList<>();

		/** Refuse a token older than the stored fence, else store it (a write without a token is not checked). */
		void fence(String sku, @Nullable Long token) {
			checkFence(sku, token);
			if (token != null) {
				this.fence = token;
			}
		}

		void checkFence(String sku, @Nullable Long token) {
			Long stored = this.fence;
			if (token != null && stored != null && token < stored) {
				throw new StaleFencingTokenException(sku, token, stored);
			}
		}

		StockLevel level(String sku) {
			return new StockLevel(sku, this.initial, this.stock, this.sold, this.orders.size(), this.fence);
		}

	}

}
