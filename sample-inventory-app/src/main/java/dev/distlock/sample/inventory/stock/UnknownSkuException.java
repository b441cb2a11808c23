package dev.distlock.sample.inventory.stock;

/** A purchase or read named a SKU whose stock was never set. */
public class UnknownSkuException extends RuntimeException {

	private final String sku;

	public UnknownSkuException(String sku) {
		super("Unknown SKU '" + sku + "': set its stock first (PUT /api/inventory/" + sku + ")");
		this.sku = sku;
	}

	public String getSku() {
		return this.sku;
	}

}
