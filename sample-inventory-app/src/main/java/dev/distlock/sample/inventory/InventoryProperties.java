package dev.distlock.sample.inventory;

import java.net.URI;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the inventory sample, under {@code inventory.*}.
 *
 * @param instanceId the name of this instance in receipts and orders; defaults to {@code inventory-<pid>}
 * @param processingDelay a pause between reading the stock and writing it back, standing in for real work (a payment
 * call, a database round trip). A demo knob: it widens the window in which unlocked purchases overlap
 * @param lock the distributed lock around a purchase (also used for the wait of the JVM-local lock)
 * @param store where stock and orders live
 */
@ConfigurationProperties("inventory")
public record InventoryProperties(@Nullable String instanceId, @DefaultValue("0ms") Duration processingDelay,
		@DefaultValue Lock lock, @DefaultValue Store store) {

	public InventoryProperties {
		if (processingDelay.isNegative()) {
			throw new IllegalArgumentException("inventory.processing-delay must not be negative, but was " + processingDelay);
		}
	}

	/** The instance id, or {@code inventory-<pid>} when none is configured. */
	public String effectiveInstanceId() {
		return (this.instanceId != null && !this.instanceId.isBlank()) ? this.instanceId
				: "inventory-" + ProcessHandle.current().pid();
	}

	/**
	 * The lock of a purchase. {@code @DistributedLock} reads these through {@code ${...}} placeholders; they are bound
	 * here too so they are documented and checked.
	 *
	 * @param ttl the lease time of a SKU's lock (the watchdog renews it while a purchase runs)
	 * @param waitTime how long a purchase waits for the SKU's lock before it is answered with 409
	 */
	public record Lock(@DefaultValue("10s") Duration ttl, @DefaultValue("5s") Duration waitTime) {
	}

	/**
	 * Where stock and orders live.
	 *
	 * @param keyPrefix the prefix of the store's Redis keys: {@code <prefix>:{<sku>}} and
	 * {@code <prefix>:{<sku>}:orders}
	 * @param redisUrl a separate Redis for stock and orders ({@code redis://host:port/db}); by default they live on
	 * the same server as the locks ({@code spring.data.redis.*})
	 */
	public record Store(@DefaultValue("inventory") String keyPrefix, @Nullable URI redisUrl) {
	}

}
