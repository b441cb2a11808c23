package dev.distlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import dev.distlock.core.LockService;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The startup warning about renewed lease times too short for the Redis client's command timeout
 * ({@link LockService#shortestRenewableTtl()}): such a lease is renewed, and survives the failure of another shard, but
 * one renewal that its own server answers late loses it. A warning, not a failure: short leases are a legitimate
 * choice where a slow server should end the work, but it should be a choice.
 */
final class LeaseTimeCheck {

	private static final Log logger = LogFactory.getLog(LeaseTimeCheck.class);

	private LeaseTimeCheck() {
	}

	/**
	 * Log one warning naming every renewed operation whose lease time is below the service's shortest renewable one;
	 * nothing when there is none, or no service.
	 */
	static void warnAboutShortLeases(LockOperationSource operationSource, Supplier<LockService> lockService) {
		String warning = warning(operationSource.operations(), service(lockService));
		if (warning != null) {
			logger.warn(warning);
		}
	}

	static @Nullable String warning(List<LockOperation> operations, @Nullable LockService service) {
		if (service == null) {
			return null;
		}
		Duration shortest = service.shortestRenewableTtl();
		if (shortest.isZero()) {
			return null;
		}
		Map<Duration, List<String>> shortByTtl = new TreeMap<>();
		for (LockOperation operation : operations) {
			if (!operation.fixedLease() && operation.ttl().compareTo(shortest) < 0) {
				shortByTtl.computeIfAbsent(operation.ttl(), ttl -> new ArrayList<>()).add(operation.description());
			}
		}
		if (shortByTtl.isEmpty()) {
			return null;
		}
		StringBuilder message = new StringBuilder("Renewed lease times shorter than ").append(shortest)
			.append(", the shortest that survives one renewal left unanswered until the Redis client's command timeout ")
			.append("(ttl > ttl x renewal ratio x 1.25 + command timeout): ");
		String separator = "";
		for (Map.Entry<Duration, List<String>> entry : shortByTtl.entrySet()) {
			message.append(separator).append(entry.getKey()).append(" on ").append(String.join(", ", entry.getValue()));
			separator = "; ";
		}
		return message.append(". One slow answer from the lease's own Redis server loses such a lease; use a longer ")
			.append("ttl or a shorter spring.data.redis.timeout (docs/topologies.md, \"Lease time and command timeout\")")
			.toString();
	}

	static @Nullable LockService service(Supplier<LockService> lockService) {
		try {
			return lockService.get();
		}
		catch (RuntimeException ex) {
			return null; // no lock service (locks disabled, or the application's context has none): nothing to check
		}
	}

}
