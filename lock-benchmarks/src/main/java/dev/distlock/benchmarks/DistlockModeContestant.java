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
 * This starter's fair lock ({@code LockRequest.fair()}, in the hot-key scenarios), read-write lock
 * ({@code LockRequest.read()} and {@code write()}, in the read-write scenario) or semaphore
 * ({@code LockRequest.permits(n)}, in the permits scenario), through the programmatic API with default settings, as
 * {@link DistlockContestant} is for the plain lock.
 */
final class DistlockModeContestant implements Contestant {

	/** Which of the starter's other kinds of lock. */
	private enum Mode {

		FAIR, READ_WRITE, PERMITS

	}

	private final Mode mode;

	private DistlockModeContestant(Mode mode) {
		this.mode = mode;
	}

	/** {@code LockRequest.fair()} in the hot-key scenarios. */
	static DistlockModeContestant fairLock() {
		return new DistlockModeContestant(Mode.FAIR);
	}

	/** {@code LockRequest.read()} and {@code write()} in the read-write scenario. */
	static DistlockModeContestant readWrite() {
		return new DistlockModeContestant(Mode.READ_WRITE);
	}

	/** {@code LockRequest.permits(n)} in the permits scenario. */
	static DistlockModeContestant permits() {
		return new DistlockModeContestant(Mode.PERMITS);
	}

	@Override
	public String name() {
		return switch (this.mode) {
			case FAIR -> "distlock fair";
			case READ_WRITE -> "distlock read-write";
			case PERMITS -> "distlock permits";
		};
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public boolean fair() {
		return this.mode == Mode.FAIR;
	}

	@Override
	public Set<Scenario> scenarios() {
		return switch (this.mode) {
			case FAIR -> EnumSet.copyOf(Scenario.HOT_KEYS);
			case READ_WRITE -> EnumSet.of(Scenario.READ_WRITE);
			case PERMITS -> EnumSet.of(Scenario.PERMITS);
		};
	}

	@Override
	public Client open(Target target, Options options) {
		LettuceConnectionFactory factory = DistlockContestant.connectionFactory(target);
		RedisLockService service = RedisLockService.builder(factory)
			.keyPrefix(switch (this.mode) {
				case FAIR -> "bench-distlock-fair";
				case READ_WRITE -> "bench-distlock-rw";
				case PERMITS -> "bench-distlock-permits";
			})
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

		@Override
		public boolean permitLocked(String key, int permits, Runnable criticalSection) {
			return run(LockRequest.of(key, this.ttl, this.waitTime).permits(permits), criticalSection);
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
