package dev.distlock.autoconfigure;

import java.time.Duration;

import dev.distlock.core.LockSettings;
import dev.distlock.interceptor.LostLeasePolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.core.Ordered;

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

	// The groups are top-level classes, so neither the configuration processor (metadata) nor the binder's AOT
	// hints see them as nested on their own, as they do inner classes: @NestedConfigurationProperty says so.

	@NestedConfigurationProperty
	private final LockHolderProperties holder = new LockHolderProperties();

	@NestedConfigurationProperty
	private final LockHealthProperties health = new LockHealthProperties();

	@NestedConfigurationProperty
	private final LockActuatorProperties actuator = new LockActuatorProperties();

	@NestedConfigurationProperty
	private final LockPreflightProperties preflight = new LockPreflightProperties();

	@NestedConfigurationProperty
	private final RedlockProperties redlock = new RedlockProperties();

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
	public LockHolderProperties getHolder() {
		return this.holder;
	}

	/** {@return the settings of the "locks" health indicator} */
	public LockHealthProperties getHealth() {
		return this.health;
	}

	/** {@return the settings of the "locks" actuator endpoint} */
	public LockActuatorProperties getActuator() {
		return this.actuator;
	}

	/** {@return the settings of the startup check of Redis's credentials and permissions} */
	public LockPreflightProperties getPreflight() {
		return this.preflight;
	}

	/** {@return the settings of the Redlock engine over independent Redis masters} */
	public RedlockProperties getRedlock() {
		return this.redlock;
	}

}
