package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.RedisLockService;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * This starter's fair lock ({@code LockRequest.fair()}, in the hot-key scenarios) or read-write lock
 * ({@code LockRequest.read()} and {@code write()}, in the read-write scenario), through the programmatic API with
 * default settings, as {@link DistlockContestant} is for the plain lock.
 */
final class DistlockModeContestant implements Contestant {

	private final boolean readWrite;

	private DistlockModeContestant(boolean readWrite) {
		this.readWrite = readWrite;
	}

	/** {@code LockRequest.fair()} in the hot-key scenarios. */
	static DistlockModeContestant fairLock() {
		return new DistlockModeContestant(false);
	}

	/** {@code LockRequest.read()} and {@code write()} in the read-write scenario. */
	static DistlockModeContestant readWrite() {
		return new DistlockModeContestant(true);
	}

	@Override
	public String name() {
		return this.readWrite ? "distlock read-write" : "distlock fair";
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public boolean fair() {
		return !this.readWrite;
	}

	@Override
	public Set<Scenario> scenarios() {
		return this.readWrite ? EnumSet.of(Scenario.READ_WRITE) : EnumSet.copyOf(Scenario.HOT_KEYS);
	}

	@Override
	public Client open(Target target, Options options) {
		LettuceConnectionFactory factory = DistlockContestant.connectionFactory(target);
		RedisLockService service = RedisLockService.builder(factory)
			.keyPrefix(this.readWrite ? "bench-distlock-rw" : "bench-distlock-fair")
			.build();
		return new ModeClient(factory, service, options.ttl(), options.waitTime());
	}

	private record ModeClient(LettuceConnectionFactory factory, RedisLockService service, Duration ttl,
			Duration waitTime) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			return run(LockRequest.of(key, this.ttl, this.waitTime).fair(), criticalSection);
		}

		@Override
		public boolean readLocked(String key, Runnable criticalSection) {
			return run(LockRequest.of(key, this.ttl, this.waitTime).read(), criticalSection);
		}

		@Override
		public boolean writeLocked(String key, Runnable criticalSection) {
			return run(LockRequest.of(key, this.ttl, this.waitTime).write(), criticalSection);
		}

		private boolean run(LockRequest request, Runnable criticalSection) {
			Optional<Lease> lease = this.service.tryAcquire(request);
			if (lease.isEmpty()) {
				return false;
			}
			try (Lease held = lease.get()) {
				criticalSection.run();
				return true;
			}
		}

		@Override
		public long heldOrWaiting() {
			return DistlockContestant.heldOrWaitingIn(this.service);
		}

		@Override
		public void close() {
			this.service.close();
			this.factory.destroy();
		}

	}

}
