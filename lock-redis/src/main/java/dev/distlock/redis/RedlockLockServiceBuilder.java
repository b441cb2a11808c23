package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadFactory;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * Settings of a {@link RedlockLockService}, each checked once; start one with
 * {@link RedlockLockService#builder(List)}.
 *
 * @since 0.1.0
 */
public final class RedlockLockServiceBuilder {

	/**
	 * The ceiling of the node timeout that follows the nodes' reply times (when {@link #nodeTimeout(Duration)} is not
	 * set), in ms: the command timeout the nodes' connection factories should have at least.
	 * @since 0.8.0
	 */
	public static final long ADAPTIVE_CEILING_MILLIS = 500;

	final List<RedisConnectionFactory> nodes;

	/** The fixed per-node timeout; null: derived from the nodes' reply times (the default). */
	@Nullable Duration nodeTimeout;

	double driftFactor = 0.01;

	Duration restartQuarantine = Duration.ZERO;

	/** The settings both engines take; this builder's setters hand them over. */
	final EngineSettings settings = new EngineSettings("distlock-redlock");

	RedlockLockServiceBuilder(List<RedisConnectionFactory> nodes) {
		Assert.notNull(nodes, "'nodes' must not be null");
		Assert.noNullElements(nodes, "'nodes' must not contain null");
		if (nodes.size() < 3 || nodes.size() % 2 == 0) {
			throw new IllegalArgumentException("Redlock needs an odd number of at least 3 independent Redis masters "
					+ "('nodes'), but was given " + nodes.size());
		}
		this.nodes = List.copyOf(nodes);
	}

	/**
	 * The namespace of the lock keys on every node: {@code <prefix>:{<key>}}. Default {@code lock}.
	 * @param keyPrefix the prefix; non-blank, without braces
	 * @return this builder
	 */
	public RedlockLockServiceBuilder keyPrefix(String keyPrefix) {
		this.settings.keyPrefix(keyPrefix);
		return this;
	}

	/**
	 * How long one call waits for one node, fixed, far below the lease times: the calls to the nodes run in parallel,
	 * so an operation takes at most about this long even when a node hangs. Lease times must be at least three times
	 * as long. Give each node's connection factory a command timeout no longer than this (the auto-configuration does),
	 * so that a hung node's calls do not pile up.
	 * <p>
	 * Not set (the default), the timeout follows what the nodes answer in: three times the 99th percentile of the last
	 * 256 reply times, never below 50 ms (so lease times must be at least 150 ms) nor above
	 * {@value #ADAPTIVE_CEILING_MILLIS} ms, and for one call never above a third of its lease time. A loaded machine whose
	 * replies stretch past 50 ms then gets a longer timeout instead of releases and renewals that miss their quorum;
	 * give each node's connection factory a command timeout of at least the ceiling.
	 * @param nodeTimeout the timeout; at least 1 ms
	 * @return this builder
	 */
	public RedlockLockServiceBuilder nodeTimeout(Duration nodeTimeout) {
		if (nodeTimeout == null || nodeTimeout.toMillis() < 1) {
			throw new IllegalArgumentException("'nodeTimeout' must be at least 1ms, but was " + nodeTimeout);
		}
		this.nodeTimeout = nodeTimeout;
		return this;
	}

	/**
	 * The part of the lease time allowed for clocks that run at different rates: a lease is taken as valid for
	 * {@code ttl − elapsed − (ttl × driftFactor + 2 ms)}. Default 0.01, as in the Redis documentation of Redlock.
	 * @param driftFactor the factor, at least 0 and below 0.5
	 * @return this builder
	 */
	public RedlockLockServiceBuilder driftFactor(double driftFactor) {
		if (!(driftFactor >= 0 && driftFactor < 0.5)) {
			throw new IllegalArgumentException("'driftFactor' must be at least 0 and below 0.5, but was " + driftFactor);
		}
		this.driftFactor = driftFactor;
		return this;
	}

	/**
	 * The delayed-restart rule, enforced by the client: a node that has been up for less than this (its
	 * {@code uptime_in_seconds}) does not count toward a new acquisition, so a node restarted without its data cannot
	 * grant a lock that other clients still hold on it. Set it to at least the longest lease time in use, on every
	 * instance. It costs one more round trip per node and acquisition, and after all nodes start together no lock is
	 * granted until they have been up this long. Default zero: off (follow the rule operationally, or persist the
	 * nodes).
	 * @param restartQuarantine the quarantine; zero for none, not negative
	 * @return this builder
	 */
	public RedlockLockServiceBuilder restartQuarantine(Duration restartQuarantine) {
		if (restartQuarantine == null || restartQuarantine.isNegative()) {
			throw new IllegalArgumentException("'restartQuarantine' must not be negative, but was " + restartQuarantine);
		}
		this.restartQuarantine = restartQuarantine;
		return this;
	}

	/**
	 * The part of the lease time after which the watchdog renews a lease; between 0 and 1, default 1/3.
	 * @param renewalRatio the ratio, between 0 and 1 (exclusive)
	 * @return this builder
	 */
	public RedlockLockServiceBuilder renewalRatio(double renewalRatio) {
		this.settings.renewalRatio(renewalRatio);
		return this;
	}

	/**
	 * How long a release channel without waiters stays subscribed on each node.
	 * @param idleUnsubscribe the delay; not negative
	 * @return this builder
	 */
	public RedlockLockServiceBuilder idleUnsubscribe(Duration idleUnsubscribe) {
		this.settings.idleUnsubscribe(idleUnsubscribe);
		return this;
	}

	/**
	 * Where {@link LockLostEvent}s are published (asynchronously, so a slow listener cannot delay renewals).
	 * @param eventPublisher the publisher, or {@code null} to publish none
	 * @return this builder
	 */
	public RedlockLockServiceBuilder eventPublisher(@Nullable ApplicationEventPublisher eventPublisher) {
		this.settings.eventPublisher = eventPublisher;
		return this;
	}

	/**
	 * Add a listener for metrics or tracing.
	 * @param listener the listener
	 * @return this builder
	 */
	public RedlockLockServiceBuilder listener(LockListener listener) {
		this.settings.listener(listener);
		return this;
	}

	/**
	 * The application that the {@linkplain HolderLabel holder label} of the service's leases names: log lines,
	 * exception messages and {@link dev.distlock.core.Lease#holder()} name a lease's holder by that label, never by
	 * its owner id. Default {@value HolderLabel#DEFAULT_APPLICATION}; Spring Boot sets {@code spring.application.name}
	 * ({@code distlock.holder.application}).
	 * @param application the application's name; not blank
	 * @return this builder
	 * @since 0.7.0
	 */
	public RedlockLockServiceBuilder holderApplication(String application) {
		this.settings.holderApplication(application);
		return this;
	}

	/**
	 * Whether each lease stores its {@linkplain HolderLabel holder label} in Redis (a field {@code ~l:<owner>} of the
	 * lease, written once per hold), so that any instance's {@code holder(key)}, the store listing and a forced release
	 * name the holder. Default {@code true}; {@code false} saves the label's bytes on each new hold (measured in
	 * docs/benchmarks.md, "Holder label: what it costs"), and those then report no label ({@code null}). Spring Boot:
	 * {@code distlock.holder.store-label}.
	 * @param store whether to store the label
	 * @return this builder
	 * @since 0.9.0
	 */
	public RedlockLockServiceBuilder storeHolderLabel(boolean store) {
		this.settings.storeHolderLabel = store;
		return this;
	}

	/**
	 * The instance that the {@linkplain HolderLabel holder label} of the service's leases names, for an operator to
	 * find it: a pod or host name, or an id of the deployment's own. Default: the host's name
	 * ({@link HolderLabel#hostName()}; Spring Boot: {@code distlock.holder.instance}).
	 * @param instance the instance's name; not blank
	 * @return this builder
	 * @since 0.7.0
	 */
	public RedlockLockServiceBuilder holderInstance(String instance) {
		this.settings.holderInstance(instance);
		return this;
	}

	/**
	 * Where the service's threads come from (e.g. a virtual thread factory); they are renamed by their role. By
	 * default platform daemon threads.
	 * @param threadFactory the factory, or {@code null} for platform daemon threads
	 * @return this builder
	 */
	public RedlockLockServiceBuilder threadFactory(@Nullable ThreadFactory threadFactory) {
		this.settings.threadFactory = threadFactory;
		return this;
	}

	/**
	 * The prefix of the service's thread names.
	 * @param threadNamePrefix the prefix; not blank
	 * @return this builder
	 */
	public RedlockLockServiceBuilder threadNamePrefix(String threadNamePrefix) {
		this.settings.threadNamePrefix(threadNamePrefix);
		return this;
	}

	/** {@return a new service with these settings} */
	public RedlockLockService build() {
		return new RedlockLockService(this);
	}

}
