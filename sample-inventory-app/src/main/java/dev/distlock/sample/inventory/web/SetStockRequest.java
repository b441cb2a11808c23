package dev.distlock.sample.inventory.web;

import org.jspecify.annotations.Nullable;

/**
 * The body of {@code PUT /api/inventory/{sku}}: {@code {"stock": 500}}.
 *
 * @param stock the new stock level, 0 or more
 */
public record SetStockRequest(@Nullable Long stock) {
}
