package dev.distlock.sample.inventory.web;

import java.net.URI;

/**
 * The {@code type} of every problem the API answers with (RFC 9457). Clients tell the two kinds of 409 apart by it:
 * {@link #SOLD_OUT} is final, {@link #LOCK_BUSY} may succeed when retried.
 */
public final class ProblemTypes {

	/** 400: a malformed SKU, a quantity below 1, a value that is not a number, an unknown lock mode or body. */
	public static final URI INVALID_REQUEST = type("invalid-request");

	/** 400 for a purchase, 404 for a read: no stock was ever set for the SKU. */
	public static final URI UNKNOWN_SKU = type("unknown-sku");

	/** 409: not enough stock left; nothing was sold. Properties: {@code sku}, {@code requested}, {@code available}. */
	public static final URI SOLD_OUT = type("sold-out");

	/**
	 * 409: the SKU's lock was held by other purchases for the whole wait; nothing was sold. With a
	 * {@code Retry-After} header. Properties: {@code lock}, {@code waitedMs}.
	 */
	public static final URI LOCK_BUSY = type("lock-busy");

	/**
	 * 409: the purchase's lease had ended and a newer lock holder had written the SKU, so the store refused the write;
	 * nothing was sold.
	 */
	public static final URI STALE_FENCING_TOKEN = type("stale-fencing-token");

	/**
	 * 503: the lease was lost (or was no longer ours) while the purchase ran; whether its write landed is unknown until
	 * the SKU is read.
	 */
	public static final URI LOCK_LOST = type("lock-lost");

	/** 503: Redis (locks or store) could not be reached. */
	public static final URI UNAVAILABLE = type("unavailable");

	/** 500: an unexpected failure, logged by the instance. */
	public static final URI INTERNAL = type("internal");

	private ProblemTypes() {
	}

	private static URI type(String name) {
		return URI.create("urn:distlock:inventory:problem:" + name);
	}

}
