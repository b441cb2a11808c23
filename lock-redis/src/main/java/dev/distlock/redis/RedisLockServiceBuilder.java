package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockSettings;
import dev.distlock.redis.internal.store.LettuceScripts;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;

/**
 * Settings of a {@link RedisLockService}, each checked once by {@link LockSettings}; start one with
 * {@link RedisLockService#builder(RedisConnectionFactory)}.
 *
 * @since 0.1.0 (until then the nested {@code RedisLockService.Builder})
 */
public final class RedisLockServiceBuilder {

	private static final boolean JEDIS_PRESENT = ClassUtils.isPresent(RedisEngineRuntimeHints.JEDIS_TYPE,
			RedisLockServiceBuilder.class.getClassLoader());

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent(RedisEngineRuntimeHints.LETTUCE_TYPE,
			RedisLockServiceBuilder.class.getClassLoader());

	final RedisConnectionFactory connectionFactory;

	int localHandOvers = 4;

	Duration fairEntryTtl = Duration.ofSeconds(2);

	int replicaAcks;

	Duration replicaAckTimeout = Duration.ofMillis(500);

	Consumer<RedisMessageListenerContainer> listenerContainerCustomizer = (container) -> {
	};

	/** How the engine talks to Redis; package-private, for the measurements and tests of each path. */
	EnginePaths paths = EnginePaths.DEFAULT;

	/** What follows the client id in owner ids; null for 128 random bits. Package-private, for tests only. */
	@Nullable Supplier<String> ownerIdParts;

	/** The settings both engines take; this builder's setters hand them over. */
	final EngineSettings settings = new EngineSettings("distlock");

	RedisLockServiceBuilder(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		this.connectionFactory = connectionFactory;
	}

	/**
	 * The namespace of the lock keys: {@code <prefix>:{<key>}}. Default {@code lock}.
	 * @param keyPrefix the prefix; non-blank, without braces
	 * @return this builder
	 */
	public RedisLockServiceBuilder keyPrefix(String keyPrefix) {
		this.settings.keyPrefix(keyPrefix);
		return this;
	}

	/**
	 * The part of the lease time after which the watchdog renews a lease; between 0 and 1, default 1/3.
	 * @param renewalRatio the ratio, between 0 and 1 (exclusive)
	 * @return this builder
	 */
	public RedisLockServiceBuilder renewalRatio(double renewalRatio) {
		this.settings.renewalRatio(renewalRatio);
		return this;
	}

	/**
	 * How long a release channel without waiters stays subscribed, saving a subscribe when waiters return.
	 * @param idleUnsubscribe the delay; not negative
	 * @return this builder
	 */
	public RedisLockServiceBuilder idleUnsubscribe(Duration idleUnsubscribe) {
		this.settings.idleUnsubscribe(idleUnsubscribe);
		return this;
	}

	/**
	 * Where {@link LockLostEvent}s are published (asynchronously, so a slow listener cannot delay renewals).
	 * @param eventPublisher the publisher, or {@code null} to publish none
	 * @return this builder
	 */
	public RedisLockServiceBuilder eventPublisher(@Nullable ApplicationEventPublisher eventPublisher) {
		this.settings.eventPublisher = eventPublisher;
		return this;
	}

	/**
	 * Add a listener for metrics or tracing.
	 * @param listener the listener
	 * @return this builder
	 */
	public RedisLockServiceBuilder listener(LockListener listener) {
		this.settings.listener(listener);
		return this;
	}

	/**
	 * Count a new lease as acquired only once {@code replicas} replicas of the master acknowledged it (Redis's
	 * {@code WAIT}, on the connection the acquisition used), so that it survives a failover to one of them. A
	 * lease that fewer replicas acknowledged within {@code timeout} is deleted again and the attempt retried within
	 * the wait, or failed with {@link dev.distlock.core.LockUnavailableException}. Hand-overs between threads of
	 * this process are off then: every new holder acquires through the script and the acknowledgement. The timeout
	 * must be shorter than the client's command timeout ({@link #build()} refuses it otherwise where the client is
	 * Lettuce, whose timeout it can read). On Redis Cluster through Lettuce only (the script and its
	 * WAIT go to the key's master). Default 0: no acknowledgement.
	 * @param replicas the replicas that must acknowledge; 0 for none, not negative
	 * @param timeout how long to wait for them; at least 1ms
	 * @return this builder
	 */
	public RedisLockServiceBuilder replicaAcks(int replicas, Duration timeout) {
		this.replicaAcks = LockSettings.checkReplicaAcks(replicas, "'replicas'");
		this.replicaAckTimeout = LockSettings.checkReplicaAckTimeout(timeout, "'timeout'");
		return this;
	}

	/**
	 * How many times in a row a released lease may go straight to another thread or asynchronous acquisition of this
	 * process waiting for it (asynchronous ones since 0.8.0), before it is released for every process to compete for;
	 * 0 turns hand-overs off. A hand-over costs one round trip and no failed attempts, where a release and a new
	 * acquisition cost two plus one failed attempt per other waiting process; the bound keeps one busy process from
	 * keeping a lock from the others. Default 4.
	 * @param localHandOvers the bound; not negative
	 * @return this builder
	 */
	public RedisLockServiceBuilder localHandOvers(int localHandOvers) {
		this.localHandOvers = LockSettings.checkLocalHandOvers(localHandOvers, "'localHandOvers'");
		return this;
	}

	/**
	 * How long a waiter's entry in a fair lock's queue lives without the waiter's keepalive (sent every third of it):
	 * a waiter whose process died delays the next waiter by at most about this long, and a lease handed to a waiter
	 * lasts this long (at most its own lease time) until its process raises it to its lease time. Default 2s.
	 * @param entryTtl the entry ttl; at least 30ms, at most 365 days
	 * @return this builder
	 */
	public RedisLockServiceBuilder fairEntryTtl(Duration entryTtl) {
		this.fairEntryTtl = LockSettings.checkFairEntryTtl(entryTtl, "'entryTtl'");
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
	public RedisLockServiceBuilder holderApplication(String application) {
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
	public RedisLockServiceBuilder storeHolderLabel(boolean store) {
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
	public RedisLockServiceBuilder holderInstance(String instance) {
		this.settings.holderInstance(instance);
		return this;
	}

	/**
	 * Where the service's threads come from (e.g. a virtual thread factory); they are renamed by their role. By
	 * default platform daemon threads.
	 * @param threadFactory the factory, or {@code null} for platform daemon threads
	 * @return this builder
	 */
	public RedisLockServiceBuilder threadFactory(@Nullable ThreadFactory threadFactory) {
		this.settings.threadFactory = threadFactory;
		return this;
	}

	/**
	 * The prefix of the service's thread names.
	 * @param threadNamePrefix the prefix; not blank
	 * @return this builder
	 */
	public RedisLockServiceBuilder threadNamePrefix(String threadNamePrefix) {
		this.settings.threadNamePrefix(threadNamePrefix);
		return this;
	}

	/**
	 * Configure the {@link RedisMessageListenerContainer} through which the engine hears release messages, before the
	 * engine sets what it relies on (the connection factory, its executors and error handler): for example Spring
	 * Boot's {@code RedisMessageListenerContainerConfigurer}, so that {@code spring.data.redis.listener.*} (recovery
	 * back-off, subscription registration timeout) applies. Not used on Redis Cluster, where the engine subscribes on
	 * each key's shard itself, nor with a connection factory that wraps Lettuce's or Jedis's (the container cannot tell
	 * the client behind it), where the engine subscribes on a connection of its own.
	 * @param customizer what to apply to the container
	 * @return this builder
	 */
	public RedisLockServiceBuilder listenerContainer(Consumer<RedisMessageListenerContainer> customizer) {
		Assert.notNull(customizer, "'customizer' must not be null");
		this.listenerContainerCustomizer = customizer;
		return this;
	}

	/**
	 * Which Redis paths the engine takes (see {@link EnginePaths}): not a user setting, for benchmarks and tests.
	 * @param paths the paths
	 * @return this builder
	 */
	RedisLockServiceBuilder paths(EnginePaths paths) {
		this.paths = paths;
		return this;
	}

	/**
	 * What follows the client id in the service's owner ids instead of random bits: not a user setting, for tests that
	 * must know an owner id before the acquisition that uses it. Each value must be fresh.
	 * @param parts the parts
	 * @return this builder
	 */
	RedisLockServiceBuilder ownerIdParts(Supplier<String> parts) {
		this.ownerIdParts = parts;
		return this;
	}

	/** {@return a new service with these settings} */
	public RedisLockService build() {
		if (this.replicaAcks > 0 && isJedisCluster(this.connectionFactory)) {
			throw new IllegalStateException("Replica acknowledgements (distlock.replica-acks=" + this.replicaAcks
					+ ") are not supported on Redis Cluster through Jedis: WAIT must follow each lease script on the "
					+ "connection to its shard's master, which Lettuce's cluster client gives. Use Lettuce (Boot's "
					+ "default client), or set distlock.replica-acks=0.");
		}
		if (this.replicaAcks > 0 && LETTUCE_PRESENT && LettuceScripts.isLettuce(this.connectionFactory)) {
			long commandTimeout = LettuceScripts.timeoutMillis(this.connectionFactory);
			if (this.replicaAckTimeout.toMillis() >= commandTimeout) {
				// WAIT then outlasts the command that carries it: every acquisition would fail as "Redis did not
				// answer", never as "too few replicas acknowledged"
				throw new IllegalStateException("distlock.replica-ack-timeout (" + this.replicaAckTimeout.toMillis()
						+ "ms) must be shorter than the Redis client's command timeout, spring.data.redis.timeout ("
						+ commandTimeout + "ms): WAIT runs within the command that acquires, so a longer wait turns "
						+ "every shortfall of replicas into a command timeout.");
			}
		}
		return new RedisLockService(this);
	}

	/** Whether the factory is Jedis's, connecting to a Redis Cluster (asked only when Jedis is on the classpath). */
	private static boolean isJedisCluster(RedisConnectionFactory connectionFactory) {
		return JEDIS_PRESENT && connectionFactory instanceof JedisConnectionFactory jedis && jedis.isRedisClusterAware();
	}

}
