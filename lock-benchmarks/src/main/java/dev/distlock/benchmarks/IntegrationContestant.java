package dev.distlock.benchmarks;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Spring Integration's {@link RedisLockRegistry} in one of its two modes: the default spin lock (retries every 100 ms)
 * or pub/sub. Non-default: {@code expireAfter} is the scenario's lease time (30 s instead of 60 s); in the watchdog
 * scenario a renewal {@link ThreadPoolTaskScheduler} is set, as the registry renews nothing without one.
 */
final class IntegrationContestant implements Contestant {

	private final RedisLockType type;

	private final boolean renew;

	private IntegrationContestant(RedisLockType type, boolean renew) {
		this.type = type;
		this.renew = renew;
	}

	/** The registry's default mode: spin lock, no renewals. */
	static IntegrationContestant spin() {
		return new IntegrationContestant(RedisLockType.SPIN_LOCK, false);
	}

	static IntegrationContestant pubSub() {
		return new IntegrationContestant(RedisLockType.PUB_SUB_LOCK, false);
	}

	/** Default (spin) mode with a renewal scheduler: the only way the registry keeps locks alive. */
	static IntegrationContestant renewing() {
		return new IntegrationContestant(RedisLockType.SPIN_LOCK, true);
	}

	@Override
	public String name() {
		if (this.renew) {
			return "Spring Integration (renewal scheduler)";
		}
		return (this.type == RedisLockType.PUB_SUB_LOCK) ? "Spring Integration pub/sub" : "Spring Integration default";
	}

	@Override
	public Kind kind() {
		return Kind.PEER;
	}

	@Override
	public Set<Scenario> scenarios() {
		return this.renew ? EnumSet.of(Scenario.WATCHDOG)
				: EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY, Scenario.HOT_KEY_8X1, Scenario.MANY_KEYS);
	}

	@Override
	public Client open(Target target, Options options) {
		LettuceConnectionFactory factory = DistlockContestant.connectionFactory(target);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "bench-si", options.ttl());
		registry.setRedisLockType(this.type);
		ThreadPoolTaskScheduler scheduler = null;
		if (this.renew) {
			scheduler = new ThreadPoolTaskScheduler();
			scheduler.setThreadNamePrefix("si-renewal-");
			scheduler.initialize();
			registry.setRenewalTaskScheduler(scheduler);
		}
		return new RegistryClient(factory, registry, scheduler, options.waitTime().toMillis());
	}

	private record RegistryClient(LettuceConnectionFactory factory, RedisLockRegistry registry,
			@Nullable ThreadPoolTaskScheduler scheduler, long waitMillis) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) throws InterruptedException {
			Lock lock = this.registry.obtain(key);
			return Client.lockedWith(lock, this.waitMillis, criticalSection);
		}

		@Override
		public Hold hold(String key) {
			Lock lock = this.registry.obtain(key);
			if (!lock.tryLock()) {
				throw new IllegalStateException("Key " + key + " is held elsewhere");
			}
			return lock::unlock;
		}

		@Override
		public void close() {
			this.registry.destroy();
			if (this.scheduler != null) {
				this.scheduler.shutdown();
			}
			this.factory.destroy();
		}

	}

}
