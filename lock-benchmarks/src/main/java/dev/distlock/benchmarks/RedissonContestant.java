package dev.distlock.benchmarks;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@link RLock} in watchdog mode ({@code tryLock(wait)} without a lease time), default client settings
 * except the watchdog timeout, which is set to the scenario's lease time (30 s, Redisson's default, in scenarios 1-3).
 */
final class RedissonContestant implements Contestant {

	@Override
	public String name() {
		return "Redisson";
	}

	@Override
	public Kind kind() {
		return Kind.PEER;
	}

	@Override
	public Set<Scenario> scenarios() {
		return EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY, Scenario.MANY_KEYS, Scenario.WATCHDOG);
	}

	@Override
	public Client open(Target target, Options options) {
		Config config = new Config();
		config.useSingleServer().setAddress(target.uri());
		config.setLockWatchdogTimeout(options.ttl().toMillis());
		RedissonClient redisson = Redisson.create(config);
		return new RedissonLockClient(redisson, options.waitTime().toMillis());
	}

	private record RedissonLockClient(RedissonClient redisson, long waitMillis) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) throws InterruptedException {
			RLock lock = this.redisson.getLock("bench-redisson:" + key);
			return Client.lockedWith(lock, this.waitMillis, criticalSection);
		}

		@Override
		public Hold hold(String key) {
			RLock lock = this.redisson.getLock("bench-redisson:" + key);
			if (!lock.tryLock()) {
				throw new IllegalStateException("Key " + key + " is held elsewhere");
			}
			return lock::unlock;
		}

		@Override
		public void close() {
			this.redisson.shutdown(0, 5, TimeUnit.SECONDS);
		}

	}

}
