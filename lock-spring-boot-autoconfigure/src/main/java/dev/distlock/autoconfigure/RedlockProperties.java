package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Redlock: one lock over N independent Redis masters, held when a quorum (N/2 + 1) grants it.
 * <p>
 * Bound under {@code distlock.redlock} through {@link LockProperties#getRedlock()}: one group of
 * {@link LockProperties}, in a class of its own only to keep each class short; the property names, defaults and
 * checks are those of the group.
 */
public class RedlockProperties {

	/**
	 * Redis URLs of the independent masters, each with its own credentials and TLS as 'spring.data.redis.url'
	 * takes them ('redis://user:password@host:port', 'rediss://...' for TLS); an odd number, at least 3. When set,
	 * the Redlock engine is the application's lock service, instead of the single-server engine.
	 */
	private List<String> nodes = new ArrayList<>();

	/**
	 * How long one call waits for one node, fixed, and the command timeout of each node's client, which also bounds
	 * its connection handshake; far below the lease times, which must be at least three times as long. Calls to the
	 * nodes run in parallel, so an operation takes at most about this long even when a node hangs. Not set (the
	 * default), it follows what the nodes answer in: three times the 99th percentile of their recent reply times,
	 * between 50 ms and 500 ms (and for one call at most a third of its lease time; lease times must be at least
	 * 150 ms), with a client command timeout of 500 ms, so that a loaded machine's slower replies lengthen it instead
	 * of failing releases and renewals.
	 */
	private @Nullable Duration nodeTimeout;

	/**
	 * Part of the lease time allowed for clocks that run at different rates: a lease counts as valid for its lease
	 * time minus the time the acquisition took minus (lease time times this factor plus 2 ms).
	 */
	private double driftFactor = 0.01;

	/**
	 * The delayed-restart rule, enforced by the client: a node up for less than this does not count toward a new
	 * acquisition, so a node restarted without its data cannot grant a lock others still hold on it. Set it to at
	 * least the longest lease time in use, on every instance; it costs one INFO round trip per node and
	 * acquisition (the Redis user needs '+info'). Zero turns it off.
	 */
	private Duration restartQuarantine = Duration.ZERO;

	/** Redlock settings with their defaults: no nodes, so the single-server engine. */
	public RedlockProperties() {
	}

	/** {@return the Redis URLs of the independent masters} */
	public List<String> getNodes() {
		return this.nodes;
	}

	/**
	 * Set the Redis URLs of the independent masters.
	 * @param nodes the URLs
	 */
	public void setNodes(List<String> nodes) {
		this.nodes = nodes;
	}

	/** {@return how long one call waits for one node, fixed; null when it follows the nodes' reply times} */
	public @Nullable Duration getNodeTimeout() {
		return this.nodeTimeout;
	}

	/**
	 * Set how long one call waits for one node, fixed; null to let it follow the nodes' reply times.
	 * @param nodeTimeout the timeout; at least 1 ms, or null
	 */
	public void setNodeTimeout(@Nullable Duration nodeTimeout) {
		if (nodeTimeout != null && nodeTimeout.toMillis() < 1) {
			throw new IllegalArgumentException("distlock.redlock.node-timeout must be at least 1ms, but was "
					+ nodeTimeout);
		}
		this.nodeTimeout = nodeTimeout;
	}

	/** {@return how long a restarted node does not count toward a new acquisition} */
	public Duration getRestartQuarantine() {
		return this.restartQuarantine;
	}

	/**
	 * Set how long a restarted node does not count toward a new acquisition.
	 * @param restartQuarantine the quarantine; zero for none, not negative
	 */
	public void setRestartQuarantine(Duration restartQuarantine) {
		if (restartQuarantine == null || restartQuarantine.isNegative()) {
			throw new IllegalArgumentException("distlock.redlock.restart-quarantine must not be negative, but was "
					+ restartQuarantine);
		}
		this.restartQuarantine = restartQuarantine;
	}

	/** {@return the part of the lease time allowed for clock drift} */
	public double getDriftFactor() {
		return this.driftFactor;
	}

	/**
	 * Set the part of the lease time allowed for clock drift.
	 * @param driftFactor the factor, at least 0 and below 0.5
	 */
	public void setDriftFactor(double driftFactor) {
		if (!(driftFactor >= 0 && driftFactor < 0.5)) {
			throw new IllegalArgumentException("distlock.redlock.drift-factor must be at least 0 and below 0.5, "
					+ "but was " + driftFactor);
		}
		this.driftFactor = driftFactor;
	}

}
