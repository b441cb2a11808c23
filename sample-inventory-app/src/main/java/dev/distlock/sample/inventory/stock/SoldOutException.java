package dev.distlock.sample.inventory.stock;

/**
 * Not enough stock left for a purchase: nothing was sold and the stock is unchanged. A business outcome, not a
 * failure; the API answers it with 409 and the problem type {@code sold-out}.
 */
public class SoldOutException extends RuntimeException {

	private final String sku;

	private final int requested;

	private final long available;

	public SoldOutException(String sku, int requested, long available) {
		super((available == 0) ? "SKU '" + sku + "' is sold out"
				: "SKU '" + sku + "' has only " + available + " left, " + requested + " requested");
		this.sku = sku;
		this.requested = requested;
		this.available = available;
	}

	public String getSku() {
		return this.sku;
	}

	public int getRequested() {
		return this.requested;
	}

	public long getAvailable() {
		return this.available;
	}

}
