package dev.distlock.autoconfigure;

import java.time.Duration;

import dev.distlock.interceptor.LostLeasePolicy;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;

/**
 * Configuration of distributed locks on Redis.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("lock")
public class LockProperties {

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
	 * the lease, so this only bounds how long a crashed instance blocks the key.
	 */
	private Duration defaultTtl = Duration.ofSeconds(30);

	/**
	 * How long @DistributedLock methods that do not set a wait time wait for a lock held elsewhere. Zero tries once.
	 */
	private Duration defaultWaitTime = Duration.ofSeconds(5);

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

	private final Health health = new Health();

	private final Actuator actuator = new Actuator();

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
		if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.contains("{") || keyPrefix.contains("}")) {
			throw new IllegalArgumentException("lock.key-prefix must be non-blank and without braces, but was '" + keyPrefix + "'");
		}
		this.keyPrefix = keyPrefix;
	}

	/** {@return the lease time of {@code @DistributedLock} methods that do not set one} */
	public Duration getDefaultTtl() {
		return this.defaultTtl;
	}

	/**
	 * Set the lease time of {@code @DistributedLock} methods that do not set one.
	 * @param defaultTtl the lease time; at least 1ms
	 */
	public void setDefaultTtl(Duration defaultTtl) {
		if (defaultTtl == null || defaultTtl.toMillis() < 1) {
			throw new IllegalArgumentException("lock.default-ttl must be at least 1ms, but was " + defaultTtl);
		}
		this.defaultTtl = defaultTtl;
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
		if (defaultWaitTime == null || defaultWaitTime.isNegative()) {
			throw new IllegalArgumentException("lock.default-wait-time must not be negative, but was " + defaultWaitTime);
		}
		this.defaultWaitTime = defaultWaitTime;
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
		if (!(renewalRatio > 0 && renewalRatio < 1)) {
			throw new IllegalArgumentException("lock.renewal-ratio must be between 0 and 1 (exclusive), but was " + renewalRatio);
		}
		this.renewalRatio = renewalRatio;
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
		if (localHandOvers < 0) {
			throw new IllegalArgumentException("lock.local-hand-overs must not be negative, but was " + localHandOvers);
		}
		this.localHandOvers = localHandOvers;
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
		if (idleUnsubscribe == null || idleUnsubscribe.isNegative()) {
			throw new IllegalArgumentException("lock.idle-unsubscribe must not be negative, but was " + idleUnsubscribe);
		}
		this.idleUnsubscribe = idleUnsubscribe;
	}

	/** {@return the settings of the "locks" health indicator} */
	public Health getHealth() {
		return this.health;
	}

	/** {@return the settings of the "locks" actuator endpoint} */
	public Actuator getActuator() {
		return this.actuator;
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
				throw new IllegalArgumentException("lock.health.renewal-failure-status must not be blank");
			}
			this.renewalFailureStatus = renewalFailureStatus;
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
