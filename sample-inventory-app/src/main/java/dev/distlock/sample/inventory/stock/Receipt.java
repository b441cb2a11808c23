package dev.distlock.sample.inventory.stock;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a successful purchase.
 *
 * @param orderId the id of the order appended to the ledger
 * @param sku the SKU
 * @param quantity the units bought
 * @param remaining the stock this purchase wrote back
 * @param mode how the purchase was locked
 * @param fencingToken the token of the lease it was written under, {@code null} without the distributed lock
 * @param instance the app instance that sold it
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Receipt(String orderId, String sku, int quantity, long remaining, LockMode mode,
		@Nullable Long fencingToken, String instance) {
}
