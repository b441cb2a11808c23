package dev.distlock.sample.inventory.stock;

import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * One entry of a SKU's order ledger.
 *
 * @param orderId a random id
 * @param quantity the units bought
 * @param mode how the purchase was locked
 * @param fencingToken the token of the lease it was written under, {@code null} without the distributed lock
 * @param instance the app instance that sold it
 * @param at when it was written
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Order(String orderId, int quantity, LockMode mode, @Nullable Long fencingToken, String instance,
		Instant at) {
}
