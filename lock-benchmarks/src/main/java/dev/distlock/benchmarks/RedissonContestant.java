package dev.distlock.benchmarks;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's locks in watchdog mode ({@code tryLock(wait)} without a lease time), default client settings except the
 * watchdog timeout, which is set to the scenario's lease time (30 s, Redisson's default, in scenarios 1-3): its
 * {@link RLock} (the default), its fair lock ({@link #fairLock()}, {@code RFairLock}, in the hot-key scenarios), its
 * {@link RReadWriteLock} ({@link #readWrite()}, in the read-write scenario) and its
 * {@link RPermitExpirableSemaphore} ({@link #permits()}, in the permits scenario: a permit with a lease time and no
 * watchdog, which that semaphore does not have, so the scenario's lease time).
 */
final class RedissonContestant implements Contestant {

	/** Which of Redisson's locks. */
	private enum Variant {

		PLAIN, FAIR, READ_WRITE, PERMITS

	}

	private final Variant variant;

	RedissonContestant() {
		this(Variant.PLAIN);
	}

	private RedissonContestant(Variant variant) {
		this.variant = variant;
	}

	/** {@code RFairLock}: grants the lock in the order it was asked for. */
	static RedissonContestant fairLock() {
		return new RedissonContestant(Variant.FAIR);
	}

	/** {@code RReadWriteLock}: the read-write scenario only. */
	static RedissonContestant readWrite() {
		return new RedissonContestant(Variant.READ_WRITE);
	}

	/** {@code RPermitExpirableSemaphore}: the permits scenario only. */
	static RedissonContestant permits() {
		return new RedissonContestant(Variant.PERMITS);
	}

	@Override
	public String name() {
		return switch (this.variant) {
			case PLAIN -> "Redisson";
			case FAIR -> "Redisson fair";
			case READ_WRITE -> "Redisson RReadWriteLock";
			case PERMITS -> "Redisson RPermitExpirableSemaphore";
		};
	}

	@Override
	public Kind kind() {
		return Kind.PEER;
	}

	@Override
	public boolean fair() {
		return this.variant == Variant.FAIR;
	}

	@Override
	public Set<Scenario> scenarios() {
		return switch (this.variant) {
			case PLAIN -> EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY, Scenario.HOT_KEY_8X1, Scenario.MANY_KEYS,
					Scenario.WATCHDOG);
			case FAIR -> EnumSet.copyOf(Scenario.HOT_KEYS);
			case READ_WRITE -> EnumSet.of(Scenario.READ_WRITE);
			case PERMITS -> EnumSet.of(Scenario.PERMITS);
		};
	}

	@Override
	public Client open(Target target, Options options) {
		Config config = new Config();
		config.useSingleServer().setAddress(target.uri());
		config.setLockWatchdogTimeout(options.ttl().toMillis());
		RedissonClient redisson = Redisson.create(config);
		return new RedissonLockClient(redisson, options.waitTime().toMillis(), options.ttl().toMillis(), this.variant);
	}

	private record RedissonLockClient(RedissonClient redisson, long waitMillis, long leaseMillis,
			Variant variant) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) throws InterruptedException {
			return Client.lockedWith(lock(key), this.waitMillis, criticalSection);
		}

		@Override
		public boolean readLocked(String key, Runnable criticalSection) throws InterruptedException {
			return Client.lockedWith(readWriteLock(key).readLock(), this.waitMillis, criticalSection);
		}

		@Override
		public boolean writeLocked(String key, Runnable criticalSection) throws InterruptedException {
			return Client.lockedWith(readWriteLock(key).writeLock(), this.waitMillis, criticalSection);
		}

		/**
		 * One permit of the semaphore, set to {@code permits} by whoever comes first ({@code trySetPermits} leaves a
		 * semaphore already set alone), taken with the wait and the lease time and given back by its id.
		 */
		@Override
		public boolean permitLocked(String key, int permits, Runnable criticalSection) throws InterruptedException {
			if (this.variant != Variant.PERMITS) {
				throw new UnsupportedOperationException("Redisson " + this.variant + " has no semaphore");
			}
			RPermitExpirableSemaphore semaphore = this.redisson.getPermitExpirableSemaphore("bench-redisson-permits:" + key);
			semaphore.trySetPermits(permits);
			String permit = semaphore.tryAcquire(this.waitMillis, this.leaseMillis, TimeUnit.MILLISECONDS);
			if (permit == null) {
				return false;
			}
			try {
				criticalSection.run();
				return true;
			}
			finally {
				semaphore.release(permit);
			}
		}

		@Override
		public Hold hold(String key) {
			RLock lock = lock(key);
			if (!lock.tryLock()) {
				throw new IllegalStateException("Key " + key + " is held elsewhere");
			}
			return lock::unlock;
		}

		private RLock lock(String key) {
			return switch (this.variant) {
				case PLAIN -> this.redisson.getLock("bench-redisson:" + key);
				case FAIR -> this.redisson.getFairLock("bench-redisson-fair:" + key);
				case READ_WRITE -> throw new UnsupportedOperationException("Redisson RReadWriteLock has read and "
						+ "write locks only");
				case PERMITS -> throw new UnsupportedOperationException("Redisson RPermitExpirableSemaphore has "
						+ "permits only");
			};
		}

		private RReadWriteLock readWriteLock(String key) {
			if (this.variant != Variant.READ_WRITE) {
				throw new UnsupportedOperationException("Redisson " + this.variant + " has no read-write lock");
			}
			return this.redisson.getReadWriteLock("bench-redisson-rw:" + key);
		}

		@Override
		public void close() {
			this.redisson.shutdown(0, 5, TimeUnit.SECONDS);
		}

	}

}
