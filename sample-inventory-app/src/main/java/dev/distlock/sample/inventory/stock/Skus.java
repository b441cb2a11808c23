package dev.distlock.sample.inventory.stock;

import java.util.regex.Pattern;

/** The rules for SKUs and quantities, checked at the API's edge and again by the service. */
public final class Skus {

	/** Letters, digits, '.', '_' and '-': safe inside a Redis key and its hash tag, and in a URL path. */
	private static final Pattern SKU = Pattern.compile("[A-Za-z0-9._-]{1,64}");

	/** More stock than this is surely a typo. */
	public static final long MAX_STOCK = 1_000_000_000L;

	private Skus() {
	}

	/** @throws InvalidRequestException if {@code sku} is not 1 to 64 letters, digits, '.', '_' or '-' */
	public static String requireValidSku(String sku) {
		if (!SKU.matcher(sku).matches()) {
			throw new InvalidRequestException("sku",
					"SKU must be 1 to 64 letters, digits, '.', '_' or '-', but was '" + sku + "'");
		}
		return sku;
	}

	/** @throws InvalidRequestException if {@code quantity} is not positive */
	public static int requirePositiveQuantity(int quantity) {
		if (quantity <= 0) {
			throw new InvalidRequestException("quantity", "Quantity must be at least 1, but was " + quantity);
		}
		return quantity;
	}

	/** @throws InvalidRequestException if {@code stock} is negative or absurdly large */
	public static long requireValidStock(long stock) {
		if (stock < 0 || stock > MAX_STOCK) {
			throw new InvalidRequestException("stock", "Stock must be between 0 and " + MAX_STOCK + ", but was " + stock);
		}
		return stock;
	}

}
