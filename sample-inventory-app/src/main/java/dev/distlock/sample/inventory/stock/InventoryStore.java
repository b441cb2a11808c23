package dev.distlock.sample.inventory.stock;

import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.Assert;

/**
 * Stock and orders of SKUs in Redis: one hash per SKU, {@code <prefix>:{<sku>}}, with the fields {@code stock},
 * {@code initial}, {@code sold} and {@code fence}, and one list of orders, {@code <prefix>:{<sku>}:orders} (the braces
 * keep both in one Cluster slot).
 * <p>
 * Reading and writing are separate calls on purpose, as in the articles: a purchase {@link #read reads} the stock,
 * decides, and {@link #recordSale writes} the new stock back, so only a lock around the steps keeps two purchases from
 * selling the same unit. The ledger ({@code sold} and the orders) is appended atomically with each write, so a lost
 * update shows as {@code sold + stock > initial}.
 * <p>
 * A write that carries a fencing token is refused when a higher token has already written the SKU ({@code fence}
 * remembers the highest); the lock alone cannot stop a holder that was paused past its lease from writing late, the
 * fence can. A write without a token (the unlocked modes) is not checked: that is what lets those modes show the bug.
 */
public class InventoryStore {

	/**
	 * Compares tokens as decimal strings, exactly: Lua numbers are doubles. Tokens are non-negative and written by
	 * {@link Long#toString(long)}, so there are no signs or leading zeros.
	 */
	private static final String OLDER = """
			local function older(a, b)
			  if #a ~= #b then return #a < #b end
			  return a < b
			end
			""";

	/** KEYS[1] SKU hash, KEYS[2] orders. Returns {} for an unknown SKU, else {stock, initial, sold, fence or '', orders}. */
	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> READ = RedisScript.of("""
			local v = redis.call('hmget', KEYS[1], 'stock', 'initial', 'sold', 'fence')
			if not v[1] then return {} end
			return {v[1], v[2] or v[1], v[3] or '0', v[4] or '', tostring(redis.call('llen', KEYS[2]))}
			""", List.class);

	/**
	 * KEYS[1] SKU hash, KEYS[2] orders; ARGV[1] new stock, ARGV[2] quantity, ARGV[3] order, ARGV[4] token or ''.
	 * Returns 'ok', 'unknown' (no such SKU) or 'stale:<stored fence>' (refused, nothing written).
	 */
	private static final RedisScript<String> RECORD_SALE = RedisScript.of(OLDER + """
			if redis.call('exists', KEYS[1]) == 0 then return 'unknown' end
			if ARGV[4] ~= '' then
			  local fence = redis.call('hget', KEYS[1], 'fence')
			  if fence and older(ARGV[4], fence) then return 'stale:' .. fence end
			  redis.call('hset', KEYS[1], 'fence', ARGV[4])
			end
			redis.call('hset', KEYS[1], 'stock', ARGV[1])
			redis.call('hincrby', KEYS[1], 'sold', ARGV[2])
			redis.call('rpush', KEYS[2], ARGV[3])
			return 'ok'
			""", String.class);

	/**
	 * KEYS[1] SKU hash, KEYS[2] orders; ARGV[1] stock, ARGV[2] token or ''. Sets the stock, resets the ledger. Returns
	 * 'ok' or 'stale:<stored fence>'.
	 */
	private static final RedisScript<String> RESET = RedisScript.of(OLDER + """
			if ARGV[2] ~= '' then
			  local fence = redis.call('hget', KEYS[1], 'fence')
			  if fence and older(ARGV[2], fence) then return 'stale:' .. fence end
			  redis.call('hset', KEYS[1], 'fence', ARGV[2])
			end
			redis.call('hset', KEYS[1], 'stock', ARGV[1], 'initial', ARGV[1], 'sold', '0')
			redis.call('del', KEYS[2])
			return 'ok'
			""", String.class);

	/** KEYS[1] SKU hash, KEYS[2] orders; ARGV[1] token or ''. Returns 'ok', 'unknown' or 'stale:<stored fence>'. */
	private static final RedisScript<String> DELETE = RedisScript.of(OLDER + """
			if redis.call('exists', KEYS[1]) == 0 then return 'unknown' end
			local fence = redis.call('hget', KEYS[1], 'fence')
			if ARGV[1] ~= '' and fence and older(ARGV[1], fence) then return 'stale:' .. fence end
			redis.call('del', KEYS[1], KEYS[2])
			return 'ok'
			""", String.class);

	private final StringRedisTemplate redis;

	private final String keyPrefix;

	private final JsonMapper json;

	public InventoryStore(StringRedisTemplate redis, String keyPrefix, JsonMapper json) {
		Assert.notNull(redis, "'redis' must not be null");
		Assert.hasText(keyPrefix, "'keyPrefix' must not be empty");
		Assert.notNull(json, "'json' must not be null");
		this.redis = redis;
		this.keyPrefix = keyPrefix;
		this.json = json;
	}

	/** The SKU's stock and ledger, read in one atomic step; empty if its stock was never set. */
	public Optional<StockLevel> read(String sku) {
		List<?> reply = this.redis.execute(READ, keys(sku));
		if (reply == null || reply.isEmpty()) {
			return Optional.empty();
		}
		String fence = String.valueOf(reply.get(3));
		return Optional.of(new StockLevel(sku, number(reply.get(1)), number(reply.get(0)), number(reply.get(2)),
				number(reply.get(4)), fence.isEmpty() ? null : Long.valueOf(fence)));
	}

	/**
	 * Write the stock a purchase computed and append its order to the ledger, in one atomic step.
	 * @param fencingToken the token of the lease the purchase holds, or {@code null} to write unchecked
	 * @throws StaleFencingTokenException if a higher token has already written the SKU (nothing is written)
	 * @throws UnknownSkuException if the SKU does not exist (any more)
	 */
	public void recordSale(String sku, long newStock, Order order, @Nullable Long fencingToken) {
		Assert.isTrue(newStock >= 0, () -> "Stock must never be negative, but was " + newStock + " for '" + sku + "'");
		String reply = this.redis.execute(RECORD_SALE, keys(sku), Long.toString(newStock),
				Integer.toString(order.quantity()), this.json.writeValueAsString(order), token(fencingToken));
		check(sku, reply, fencingToken);
	}

	/**
	 * Set the SKU's stock (creating it if needed) and start a new ledger: sold 0, no orders.
	 * @param fencingToken the token of the lease the caller holds, or {@code null} to write unchecked
	 * @throws StaleFencingTokenException if a higher token has already written the SKU (nothing is written)
	 */
	public StockLevel reset(String sku, long stock, @Nullable Long fencingToken) {
		String reply = this.redis.execute(RESET, keys(sku), Long.toString(Skus.requireValidStock(stock)), token(fencingToken));
		check(sku, reply, fencingToken);
		return read(sku).orElseThrow(() -> new UnknownSkuException(sku));
	}

	/**
	 * Delete the SKU and its orders.
	 * @return whether it existed
	 * @throws StaleFencingTokenException if a higher token has already written the SKU (nothing is deleted)
	 */
	public boolean delete(String sku, @Nullable Long fencingToken) {
		String reply = this.redis.execute(DELETE, keys(sku), token(fencingToken));
		if ("unknown".equals(reply)) {
			return false;
		}
		check(sku, reply, fencingToken);
		return true;
	}

	/** The newest orders of the SKU, oldest first, at most {@code limit}. */
	public List<Order> recentOrders(String sku, int limit) {
		if (limit <= 0) {
			return List.of();
		}
		List<String> entries = this.redis.opsForList().range(ordersKey(sku), -limit, -1);
		return (entries != null) ? entries.stream().map((entry) -> this.json.readValue(entry, Order.class)).toList() : List.of();
	}

	/** The hash that holds the SKU's stock, ledger totals and fence. */
	public String stockKey(String sku) {
		return this.keyPrefix + ":{" + sku + "}";
	}

	/** The list that holds the SKU's orders. */
	public String ordersKey(String sku) {
		return stockKey(sku) + ":orders";
	}

	private List<String> keys(String sku) {
		return List.of(stockKey(sku), ordersKey(sku));
	}

	private static String token(@Nullable Long fencingToken) {
		if (fencingToken == null) {
			return "";
		}
		Assert.isTrue(fencingToken >= 0, () -> "Fencing token must not be negative, but was " + fencingToken);
		return Long.toString(fencingToken);
	}

	private static void check(String sku, @Nullable String reply, @Nullable Long fencingToken) {
		if ("ok".equals(reply)) {
			return;
		}
		if ("unknown".equals(reply)) {
			throw new UnknownSkuException(sku);
		}
		if (reply != null && reply.startsWith("stale:") && fencingToken != null) {
			throw new StaleFencingTokenException(sku, fencingToken, Long.parseLong(reply.substring("stale:".length())));
		}
		throw new IllegalStateException("Unexpected reply '" + reply + "' from the inventory script for '" + sku + "'");
	}

	private static long number(@Nullable Object value) {
		return Long.parseLong(String.valueOf(value));
	}

}
