package dev.distlock.sample.inventory.stock;

/**
 * A request the inventory cannot act on as given: a malformed SKU, a quantity or stock out of range, an unknown lock
 * mode. Answered with 400.
 */
public class InvalidRequestException extends RuntimeException {

	private final String parameter;

	public InvalidRequestException(String parameter, String message) {
		super(message);
		this.parameter = parameter;
	}

	/** The name of the offending parameter. */
	public String getParameter() {
		return this.parameter;
	}

}
