package dev.distlock.sample.inventory.stock;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * How a purchase guards its read-modify-write of the stock. Only {@link #DISTRIBUTED} is correct with more than one
 * instance; the other two exist to show why.
 */
public enum LockMode {

	/** No lock: concurrent purchases read the same stock and overwrite each other's writes. */
	NONE,

	/**
	 * A JVM-local lock per SKU: correct inside one instance, useless across instances behind a load balancer (the
	 * articles' {@code sync.Mutex} and {@code synchronized}).
	 */
	LOCAL,

	/** {@code @DistributedLock} on the SKU, and a write fenced by the lease's token. */
	DISTRIBUTED;

	/** The name used in the API and the demo: {@code none}, {@code local}, {@code distributed}. */
	@JsonValue
	public String parameterValue() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * The mode named by a request parameter, in any case.
	 * @throws InvalidRequestException if no mode has that name
	 */
	@JsonCreator
	public static LockMode fromParameter(String value) {
		for (LockMode mode : values()) {
			if (mode.name().equalsIgnoreCase(value.trim())) {
				return mode;
			}
		}
		throw new InvalidRequestException("lock", "Parameter 'lock' must be one of " + Arrays.stream(values())
				.map(LockMode::parameterValue).collect(Collectors.joining(", ")) + ", but was '" + value + "'");
	}

}
