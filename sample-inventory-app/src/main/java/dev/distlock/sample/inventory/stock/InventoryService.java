package dev.distlock.sample.inventory.stock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.sample.inventory.InventoryProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Service;

/**
 * Sells stock. A purchase is a deliberate read-modify-write, as in the articles: read the stock, check it, write the
 * new stock back, append the order. Two purchases of the same SKU that overlap both read the same stock, and one of
 * the writes is lost while both orders count: the SKU is oversold. {@link #purchase} prevents that across instances
 * with the SKU's distributed lock, and fences its write with the lease's token; {@link #purchaseWithLocalLock} and
 * {@link #purchaseWithoutLock} are there to show what goes wrong without it.
 * <p>
 * Call the locked methods through the Spring proxy (from another bean): a call from inside this class would skip the
 * lock, and {@link #purchase} then refuses to run.
 */
@Service
public class InventoryService {

	/** Plenty for a sample; 256 SKUs share no stripe most of the time. */
	private static final int LOCAL_LOCK_STRIPES = 256;

	private final InventoryStore store;

	private final String instanceId;

	private final Duration processingDelay;

	private final Duration localLockWait;

	private final LocalLocks localLocks = new LocalLocks(LOCAL_LOCK_STRIPES);

	public InventoryService(InventoryStore store, InventoryProperties properties) {
		this.store = store;
		this.instanceId = properties.effectiveInstanceId();
		this.processingDelay = properties.processingDelay();
		this.localLockWait = properties.lock().waitTime();
	}

	/**
	 * Buy {@code quantity} units of {@code sku} while holding the SKU's distributed lock, so that no other purchase of
	 * it runs on any instance meanwhile; the write is refused if a newer lock holder has written the SKU since.
	 * @throws SoldOutException if less than {@code quantity} is left (nothing is sold)
	 * @throws UnknownSkuException if the SKU's stock was never set
	 * @throws dev.distlock.core.LockAcquisitionTimeoutException if the lock was not free within
	 * {@code inventory.lock.wait-time}
	 * @throws StaleFencingTokenException if this call's lease ended and a newer holder wrote the SKU
	 */
	@DistributedLock(key = "'inventory:' + #sku", ttl = "${inventory.lock.ttl}", waitTime = "${inventory.lock.wait-time}",
			name = "inventory")
	public Receipt purchase(String sku, int quantity) {
		return sell(sku, quantity, LockMode.DISTRIBUTED, currentFencingToken("purchase"));
	}

	/**
	 * Buy holding only this JVM's lock for the SKU: safe within one instance, oversells when several instances sell
	 * the same SKU.
	 */
	public Receipt purchaseWithLocalLock(String sku, int quantity) {
		return this.localLocks.execute(lockKey(sku), this.localLockWait, () -> sell(sku, quantity, LockMode.LOCAL, null));
	}

	/** Buy with no lock at all: oversells as soon as two purchases of the SKU overlap. */
	public Receipt purchaseWithoutLock(String sku, int quantity) {
		return sell(sku, quantity, LockMode.NONE, null);
	}

	/**
	 * Set the stock of {@code sku}, creating it if needed, and start a new ledger (sold 0, no orders). Holds the SKU's
	 * lock, so it never interleaves with a purchase.
	 */
	@DistributedLock(key = "'inventory:' + #sku", ttl = "${inventory.lock.ttl}", waitTime = "${inventory.lock.wait-time}",
			name = "inventory")
	public StockLevel setStock(String sku, long stock) {
		Skus.requireValidSku(sku);
		return this.store.reset(sku, Skus.requireValidStock(stock), currentFencingToken("setStock"));
	}

	/** Delete {@code sku} and its orders, holding its lock. @return whether it existed */
	@DistributedLock(key = "'inventory:' + #sku", ttl = "${inventory.lock.ttl}", waitTime = "${inventory.lock.wait-time}",
			name = "inventory")
	public boolean delete(String sku) {
		Skus.requireValidSku(sku);
		return this.store.delete(sku, currentFencingToken("delete"));
	}

	/** The SKU's stock and ledger, without a lock (one atomic read). */
	public Optional<StockLevel> find(String sku) {
		return this.store.read(Skus.requireValidSku(sku));
	}

	/** The newest orders of the SKU, oldest first. */
	public List<Order> recentOrders(String sku, int limit) {
		return this.store.recentOrders(Skus.requireValidSku(sku), limit);
	}

	/** The name of this instance in receipts and orders. */
	public String instanceId() {
		return this.instanceId;
	}

	private Receipt sell(String sku, int quantity, LockMode mode, @Nullable Long fencingToken) {
		Skus.requireValidSku(sku);
		Skus.requirePositiveQuantity(quantity);
		// 1. read
		StockLevel level = this.store.read(sku).orElseThrow(() -> new UnknownSkuException(sku));
		// 2. check
		if (level.stock() < quantity) {
			throw new SoldOutException(sku, quantity, level.stock());
		}
		// 3. compute (the "work" between reading and writing)
		simulateProcessing();
		long remaining = level.stock() - quantity;
		Order order = new Order(UUID.randomUUID().toString(), quantity, mode, fencingToken, this.instanceId, Instant.now());
		// 4. write back, with the order
		this.store.recordSale(sku, remaining, order, fencingToken);
		return new Receipt(order.orderId(), sku, quantity, remaining, mode, fencingToken, this.instanceId);
	}

	private void simulateProcessing() {
		if (this.processingDelay.isZero()) {
			return;
		}
		try {
			TimeUnit.NANOSECONDS.sleep(this.processingDelay.toNanos());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while processing a purchase", ex);
		}
	}

	/**
	 * The token of the lease the interceptor holds for this call. Without one the lock is not active (the method was
	 * called from inside this class, or the lock auto-configuration is off), and writing unguarded would oversell.
	 */
	private static long currentFencingToken(String method) {
		return LockContext.current().map(Lease::fencingToken).orElseThrow(() -> new IllegalStateException(
				"InventoryService." + method + " ran without its distributed lock: call it through the Spring proxy, "
						+ "with the distlock auto-configuration enabled (distlock.enabled=true)"));
	}

	private static String lockKey(String sku) {
		return "inventory:" + sku;
	}

}
