package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockSettings;
import dev.distlock.interceptor.LostLeasePolicy;
import dev.distlock.preflight.PreflightMode;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * Configuration of distributed locks, under {@value #PREFIX}. The {@code lock.*} names of earlier versions still work
 * for one release, with a warning at startup.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(LockProperties.PREFIX)
public class LockProperties {

	/** The prefix of these properties. */
	public static final String PREFIX = "distlock";

	/**
	 * Whether to enable distributed locks: the lock service and the @DistributedLock interceptor.
	 */
	private boolean enabled = true;

	/**
	 * Namespace of the lock keys in Redis: a lock on key "k" is stored at "<prefix>:{k}". Applications that share a
	 * Redis server and must not see each other's locks use different prefixes.
	 */
	private String keyPrefix = "lock";

	/**
	 * Lease time of @DistributedLock methods that do not set one. While the method runs the watchdog keeps renewing
	 * the lease, so this only bounds how long a crashed instance blocks the key. At most 365 days.
	 */
	private Duration defaultTtl = Duration.ofSeconds(30);

	/**
	 * How long @DistributedLock methods that do not set a wait time wait for a lock held elsewhere. Zero tries once.
	 */
	private Duration defaultWaitTime = Duration.ofSeconds(5);

	/**
	 * Longest time a @DistributedLock method that does not set maxHold holds its lock, a cap on runaway holders: once
	 * a lease has been held that long since its acquisition, the watchdog stops renewing it and the lease is lost
	 * (detection 'max-hold-exceeded'). At least the lease time of every such method, at most 365 days. None when
	 * unset.
	 */
	private @Nullable Duration maxHold;

	/**
	 * Whether the thread running a blocking @DistributedLock method is interrupted when its lease is lost by its
	 * maxHold. Futures are cancelled and reactive streams fail either way.
	 */
	private boolean maxHoldInterrupt;

	/**
	 * Part of the lease time after which the watchdog renews a held lease, between 0 and 1 (exclusive).
	 */
	private double renewalRatio = 1.0 / 3;

	/**
	 * Order of the @DistributedLock advice among the other advice on a bean. The default (highest precedence) takes
	 * the lock before a @Transactional method's transaction begins and releases it after the commit.
	 */
	private int adviceOrder = Ordered.HIGHEST_PRECEDENCE;

	/**
	 * What a @DistributedLock call does when its lease was lost while the method ran: 'throw' a LockLostException
	 * after the method returned, or 'warn' in the log.
	 */
	private LostLeasePolicy onLostLease = LostLeasePolicy.THROW;

	/**
	 * How long a release channel without waiters stays subscribed, saving a subscription when waiters come back.
	 */
	private Duration idleUnsubscribe = Duration.ofSeconds(1);

	/**
	 * How many times in a row a released lock may go straight to another thread of this instance waiting for it,
	 * before it is released for every instance to compete for. Zero turns hand-overs off.
	 */
	private int localHandOvers = 4;

	/**
	 * How long a waiter's entry in a fair lock's queue lives in Redis without the waiter's keepalive (sent every
	 * third of it): a waiter whose instance died delays the next one by at most about this long.
	 */
	private Duration fairEntryTtl = Duration.ofSeconds(2);

	/**
	 * How many replicas must acknowledge a new lease (Redis WAIT) before it counts as acquired, so that it survives a
	 * failover to one of them. A lease fewer replicas acknowledge in time is deleted again and the attempt retried
	 * within the wait. Zero (the default) waits for none. Turns hand-overs between threads off; on Redis
	 * Cluster only through Lettuce (the script and its WAIT go to the key's master).
	 */
	private int replicaAcks;

	/**
	 * How long a new lease waits for its replica acknowledgements; shorter than spring.data.redis.timeout.
	 */
	private Duration replicaAckTimeout = Duration.ofMillis(500);

	private final Holder holder = new Holder();

	private final Health health = new Health();

	private final Actuator actuator = new Actuator();

	private final Preflight preflight = new Preflight();

	private final Redlock redlock = new Redlock();

	/** Properties with their defaults. */
	public LockProperties() {
	}

	/** {@return whether distributed locks are enabled} */
	public boolean isEnabled() {
		return this.enabled;
	}

	/**
	 * Set whether to enable distributed locks.
	 * @param enabled whether to enable them
	 */
	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	/** {@return the namespace of the lock keys in Redis} */
	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * Set the namespace of the lock keys in Redis.
	 * @param keyPrefix the prefix; non-blank, without braces
	 */
	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = LockSettings.checkKeyPrefix(keyPrefix, "distlock.key-prefix");
	}

	/** {@return the lease time of {@code @DistributedLock} methods that do not set one} */
	public Duration getDefaultTtl() {
		return this.defaultTtl;
	}

	/**
	 * Set the lease time of {@code @DistributedLock} methods that do not set one.
	 * @param defaultTtl the lease time; at least 1ms, at most 365 days
	 */
	public void setDefaultTtl(Duration defaultTtl) {
		this.defaultTtl = LockSettings.checkTtl(defaultTtl, "distlock.default-ttl");
	}

	/**
	 * {@return the longest hold of {@code @DistributedLock} methods that do not set one, or {@code null} for none}
	 * @since 0.7.0
	 */
	public @Nullable Duration getMaxHold() {
		return this.maxHold;
	}

	/**
	 * Set the longest hold of {@code @DistributedLock} methods that do not set one.
	 * @param maxHold the longest hold, or {@code null} for none; at least 1ms, at most 365 days (and at least the
	 * lease time of each method it applies to, checked at startup)
	 * @since 0.7.0
	 */
	public void setMaxHold(@Nullable Duration maxHold) {
		this.maxHold = (maxHold != null) ? LockSettings.checkTtl(maxHold, "distlock.max-hold") : null;
	}

	/**
	 * {@return whether the thread of a blocking {@code @DistributedLock} method is interrupted at its maxHold}
	 * @since 0.7.0
	 */
	public boolean isMaxHoldInterrupt() {
		return this.maxHoldInterrupt;
	}

	/**
	 * Set whether the thread of a blocking {@code @DistributedLock} method is interrupted at its maxHold.
	 * @param maxHoldInterrupt whether to interrupt it
	 * @since 0.7.0
	 */
	public void setMaxHoldInterrupt(boolean maxHoldInterrupt) {
		this.maxHoldInterrupt = maxHoldInterrupt;
	}

	/** {@return how long {@code @DistributedLock} methods that do not set a wait time wait} */
	public Duration getDefaultWaitTime() {
		return this.defaultWaitTime;
	}

	/**
	 * Set how long {@code @DistributedLock} methods that do not set a wait time wait.
	 * @param defaultWaitTime the wait; not negative
	 */
	public void setDefaultWaitTime(Duration defaultWaitTime) {
		this.defaultWaitTime = LockSettings.checkWaitTime(defaultWaitTime, "distlock.default-wait-time");
	}

	/** {@return the part of the lease time after which the watchdog renews a held lease} */
	public double getRenewalRatio() {
		return this.renewalRatio;
	}

	/**
	 * Set the part of the lease time after which the watchdog renews a held lease.
	 * @param renewalRatio the ratio, between 0 and 1 (exclusive)
	 */
	public void setRenewalRatio(double renewalRatio) {
		this.renewalRatio = LockSettings.checkRenewalRatio(renewalRatio, "distlock.renewal-ratio");
	}

	/** {@return the order of the {@code @DistributedLock} advice among the other advice on a bean} */
	public int getAdviceOrder() {
		return this.adviceOrder;
	}

	/**
	 * Set the order of the {@code @DistributedLock} advice among the other advice on a bean.
	 * @param adviceOrder the order
	 */
	public void setAdviceOrder(int adviceOrder) {
		this.adviceOrder = adviceOrder;
	}

	/** {@return what a {@code @DistributedLock} call does when its lease was lost while the method ran} */
	public LostLeasePolicy getOnLostLease() {
		return this.onLostLease;
	}

	/**
	 * Set what a {@code @DistributedLock} call does when its lease was lost while the method ran.
	 * @param onLostLease the policy
	 */
	public void setOnLostLease(LostLeasePolicy onLostLease) {
		this.onLostLease = onLostLease;
	}

	/** {@return how many times in a row a released lock may go straight to another thread of this instance} */
	public int getLocalHandOvers() {
		return this.localHandOvers;
	}

	/**
	 * Set how many times in a row a released lock may go straight to another thread of this instance.
	 * @param localHandOvers the bound; not negative, zero turns hand-overs off
	 */
	public void setLocalHandOvers(int localHandOvers) {
		this.localHandOvers = LockSettings.checkLocalHandOvers(localHandOvers, "distlock.local-hand-overs");
	}

	/** {@return how long a fair lock's queue entry lives without its waiter's keepalive} */
	public Duration getFairEntryTtl() {
		return this.fairEntryTtl;
	}

	/**
	 * Set how long a fair lock's queue entry lives without its waiter's keepalive.
	 * @param fairEntryTtl the entry ttl; at least 30ms, at most 365 days
	 */
	public void setFairEntryTtl(Duration fairEntryTtl) {
		this.fairEntryTtl = LockSettings.checkFairEntryTtl(fairEntryTtl, "distlock.fair-entry-ttl");
	}

	/** {@return how many replicas must acknowledge a new lease} */
	public int getReplicaAcks() {
		return this.replicaAcks;
	}

	/**
	 * Set how many replicas must acknowledge a new lease before it counts as acquired.
	 * @param replicaAcks the number of replicas; not negative, zero waits for none
	 */
	public void setReplicaAcks(int replicaAcks) {
		this.replicaAcks = LockSettings.checkReplicaAcks(replicaAcks, "distlock.replica-acks");
	}

	/** {@return how long a new lease waits for its replica acknowledgements} */
	public Duration getReplicaAckTimeout() {
		return this.replicaAckTimeout;
	}

	/**
	 * Set how long a new lease waits for its replica acknowledgements.
	 * @param replicaAckTimeout the wait; at least 1ms
	 */
	public void setReplicaAckTimeout(Duration replicaAckTimeout) {
		this.replicaAckTimeout = LockSettings.checkReplicaAckTimeout(replicaAckTimeout, "distlock.replica-ack-timeout");
	}

	/** {@return how long a release channel without waiters stays subscribed} */
	public Duration getIdleUnsubscribe() {
		return this.idleUnsubscribe;
	}

	/**
	 * Set how long a release channel without waiters stays subscribed.
	 * @param idleUnsubscribe the delay; not negative
	 */
	public void setIdleUnsubscribe(Duration idleUnsubscribe) {
		this.idleUnsubscribe = LockSettings.checkIdleUnsubscribe(idleUnsubscribe, "distlock.idle-unsubscribe");
	}

	/** {@return how log lines and messages name the holder of this instance's leases} */
	public Holder getHolder() {
		return this.holder;
	}

	/** {@return the settings of the "locks" health indicator} */
	public Health getHealth() {
		return this.health;
	}

	/** {@return the settings of the "locks" actuator endpoint} */
	public Actuator getActuator() {
		return this.actuator;
	}

	/** {@return the settings of the startup check of Redis's credentials and permissions} */
	public Preflight getPreflight() {
		return this.preflight;
	}

	/** {@return the settings of the Redlock engine over independent Redis masters} */
	public Redlock getRedlock() {
		return this.redlock;
	}

	/** Redlock: one lock over N independent Redis masters, held when a quorum (N/2 + 1) grants it. */
	public static class Redlock {

		/**
		 * Redis URLs of the independent masters, each with its own credentials and TLS as 'spring.data.redis.url'
		 * takes them ('redis://user:password@host:port', 'rediss://...' for TLS); an odd number, at least 3. When set,
		 * the Redlock engine is the application's lock service, instead of the single-server engine.
		 */
		private List<String> nodes = new ArrayList<>();

		/**
		 * How long one call waits for one node, and the command timeout of each node's client, which also bounds its
		 * connection handshake; far below the lease times, which must be at least three times as long. Calls to the
		 * nodes run in parallel, so an operation takes at most about this long even when a node hangs.
		 */
		private Duration nodeTimeout = Duration.ofMillis(50);

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
		public Redlock() {
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

		/** {@return how long one call waits for one node} */
		public Duration getNodeTimeout() {
			return this.nodeTimeout;
		}

		/**
		 * Set how long one call waits for one node.
		 * @param nodeTimeout the timeout; at least 1 ms
		 */
		public void setNodeTimeout(Duration nodeTimeout) {
			if (nodeTimeout == null || nodeTimeout.toMillis() < 1) {
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

	/**
	 * The holder label of this instance's leases: what log lines, exception messages and Lease.holder() name a
	 * lease's holder by, instead of its owner id (which a release presents to Redis).
	 */
	public static class Holder {

		/**
		 * Application named in the holder label of this instance's leases. Defaults to spring.application.name, else
		 * 'application'.
		 */
		private @Nullable String application;

		/**
		 * Instance named in the holder label of this instance's leases, for an operator to find it: a pod or host
		 * name, or an id of the deployment's own. Defaults to the host's name: the HOSTNAME environment variable (a
		 * Kubernetes pod's name), else the name the operating system reports.
		 */
		private @Nullable String instance;

		/**
		 * Whether each lease stores its holder label in Redis, once per hold, so that any instance's holder query, the
		 * store listing (GET /actuator/locks/all) and a forced release name the holder.
		 */
		private boolean storeLabel = true;

		/** Holder label settings with their defaults. */
		public Holder() {
		}

		/** {@return whether each lease stores its holder label in Redis} */
		public boolean isStoreLabel() {
			return this.storeLabel;
		}

		/**
		 * Set whether each lease stores its holder label in Redis.
		 * @param storeLabel {@code false} to store none
		 */
		public void setStoreLabel(boolean storeLabel) {
			this.storeLabel = storeLabel;
		}

		/** {@return the application named in the holder label, or {@code null} for the default} */
		public @Nullable String getApplication() {
			return this.application;
		}

		/**
		 * Set the application named in the holder label.
		 * @param application the application's name; not blank, {@code null} for the default
		 */
		public void setApplication(@Nullable String application) {
			this.application = notBlank(application, "distlock.holder.application");
		}

		/** {@return the instance named in the holder label, or {@code null} for the host's name} */
		public @Nullable String getInstance() {
			return this.instance;
		}

		/**
		 * Set the instance named in the holder label.
		 * @param instance the instance's name; not blank, {@code null} for the host's name
		 */
		public void setInstance(@Nullable String instance) {
			this.instance = notBlank(instance, "distlock.holder.instance");
		}

		/**
		 * The application the engines' holder labels name: this one, else {@code spring.application.name}, else
		 * {@value HolderLabel#DEFAULT_APPLICATION}.
		 * @param environment where {@code spring.application.name} is read
		 * @return the application's name, not blank
		 */
		public String applicationOrDefault(Environment environment) {
			if (this.application != null) {
				return this.application;
			}
			String name = environment.getProperty("spring.application.name");
			return StringUtils.hasText(name) ? name.trim() : HolderLabel.DEFAULT_APPLICATION;
		}

		/**
		 * The instance the engines' holder labels name: this one, else the host's name
		 * ({@link HolderLabel#hostName()}).
		 * @return the instance's name, not blank
		 */
		public String instanceOrDefault() {
			return (this.instance != null) ? this.instance : HolderLabel.hostName();
		}

		private static @Nullable String notBlank(@Nullable String value, String property) {
			if (value != null && value.isBlank()) {
				throw new IllegalArgumentException(property + " must not be blank; leave it unset for the default");
			}
			return (value != null) ? value.trim() : null;
		}

	}

	/** The "locks" health indicator. */
	public static class Health {

		/**
		 * Health status reported while renewals of held leases are failing: 'down', 'out-of-service' (to take the
		 * instance out of a load balancer without restarting it) or a custom status code.
		 */
		private String renewalFailureStatus = "down";

		/** Health settings with their defaults. */
		public Health() {
		}

		/** {@return the health status reported while renewals of held leases are failing} */
		public String getRenewalFailureStatus() {
			return this.renewalFailureStatus;
		}

		/**
		 * Set the health status reported while renewals of held leases are failing.
		 * @param renewalFailureStatus the status code; not blank
		 */
		public void setRenewalFailureStatus(String renewalFailureStatus) {
			if (renewalFailureStatus == null || renewalFailureStatus.isBlank()) {
				throw new IllegalArgumentException("distlock.health.renewal-failure-status must not be blank");
			}
			this.renewalFailureStatus = renewalFailureStatus;
		}

	}

	/** The check at startup that the Redis user may do everything the locks need. */
	public static class Preflight {

		/** Created with the defaults, then bound by Spring Boot. */
		public Preflight() {
		}

		/**
		 * Whether to check at startup that Redis accepts the credentials and TLS handshake, and allows every command,
		 * key and channel the locks use.
		 */
		private boolean enabled = true;

		/**
		 * What a refusal does: 'fail' the start, or 'warn' in the log and report the "locks" health DOWN. A Redis
		 * that is merely unreachable never fails the start.
		 */
		private PreflightMode mode = PreflightMode.FAIL;

		/**
		 * How long the check may hold up the start at most; a Redis that does not answer within it is taken as
		 * unreachable. It covers the application's first connection, TLS handshake and class loading included.
		 */
		private Duration timeout = Duration.ofSeconds(10);

		/** {@return whether the check runs at startup} */
		public boolean isEnabled() {
			return this.enabled;
		}

		/**
		 * Set whether the check runs at startup.
		 * @param enabled whether to check
		 */
		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		/** {@return what a refusal does} */
		public PreflightMode getMode() {
			return this.mode;
		}

		/**
		 * Set what a refusal does.
		 * @param mode fail the start, or warn and report the health DOWN
		 */
		public void setMode(PreflightMode mode) {
			this.mode = mode;
		}

		/** {@return how long the check may hold up the start at most} */
		public Duration getTimeout() {
			return this.timeout;
		}

		/**
		 * Set how long the check may hold up the start at most.
		 * @param timeout the deadline; at least 1ms
		 */
		public void setTimeout(Duration timeout) {
			if (timeout == null || timeout.toMillis() < 1) {
				throw new IllegalArgumentException("distlock.preflight.timeout must be at least 1ms, but was " + timeout);
			}
			this.timeout = timeout;
		}

	}

	/** The "locks" actuator endpoint. */
	public static class Actuator {

		private final ForceRelease forceRelease = new ForceRelease();

		/** Endpoint settings with their defaults. */
		public Actuator() {
		}

		/** {@return the settings of the forced release through the endpoint} */
		public ForceRelease getForceRelease() {
			return this.forceRelease;
		}

		/** Forced release of a lock through the endpoint. */
		public static class ForceRelease {

			/**
			 * Whether the "locks" endpoint offers a delete operation that force-releases a key, whoever holds it. Every
			 * use is logged at WARN and published as an audit event.
			 */
			private boolean enabled;

			/** Forced release settings with their defaults: off. */
			public ForceRelease() {
			}

			/** {@return whether the endpoint offers the force-release operation} */
			public boolean isEnabled() {
				return this.enabled;
			}

			/**
			 * Set whether the endpoint offers the force-release operation.
			 * @param enabled whether it does
			 */
			public void setEnabled(boolean enabled) {
				this.enabled = enabled;
			}

		}

	}

}
