package dev.distlock.sample.inventory.stock;

/**
 * The store refused a write because a newer lock holder has already written this SKU: the writer's lease ended (it
 * was paused past its ttl, or Redis lost the lock) and someone else got the lock meanwhile. Nothing was written.
 */
public class StaleFencingTokenException extends RuntimeException {

	private final String sku;

	private final long token;

	private final long storedToken;

	public StaleFencingTokenException(String sku, long token, long storedToken) {
		super("Write to SKU '" + sku + "' with fencing token " + token + " rejected: a newer lock holder (token "
				+ storedToken + ") has already written it");
		this.sku = sku;
		this.token = token;
		this.storedToken = storedToken;
	}

	public String getSku() {
		return this.sku;
	}

	/** The token of the rejected write. */
	public long getToken() {
		return this.token;
	}

	/** The highest token that has written the SKU. */
	public long getStoredToken() {
		return this.storedToken;
	}

}
