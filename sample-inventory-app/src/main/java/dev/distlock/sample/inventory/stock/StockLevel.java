package dev.distlock.sample.inventory.stock;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * What the store holds for one SKU. A correct history keeps {@code stock + sold == initialStock} and
 * {@code orders == sold} (for purchases of one unit); lost updates break the first, and show as {@link #oversold()}.
 *
 * @param sku the SKU
 * @param initialStock the stock it was last set to
 * @param stock what is left to sell, never negative
 * @param sold units in the order ledger (incremented with each order, not read-modify-written)
 * @param orders the number of orders
 * @param fencingToken the highest fencing token that has written the SKU, or {@code null} if no locked write has
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StockLevel(String sku, long initialStock, long stock, long sold, long orders, @Nullable Long fencingToken) {

	/** Units sold beyond what existed: {@code sold + stock − initialStock}; zero when every purchase was exclusive. */
	@JsonProperty
	public long oversold() {
		return this.sold + this.stock - this.initialStock;
	}

}
