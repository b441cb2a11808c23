package dev.distlock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;

/**
 * A {@link LockService} of one JVM, a {@link ReentrantLock} per key: what an application's own engine looks like to
 * the starter, for tests that must show that the annotation and the observations need no Redis. Leases are released
 * on the thread that acquired them, as the interceptor does.
 */
public class InMemoryLockService implements LockService {

	private final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();

	private final AtomicLong tokens = new AtomicLong();

	private final List<LockRequest> requests = new CopyOnWriteArrayList<>();

	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		this.requests.add(request);
		ReentrantLock lock = this.locks.computeIfAbsent(request.key(), (key) -> new ReentrantLock());
		try {
			if (!lock.tryLock(request.waitTime().toNanos(), TimeUnit.NANOSECONDS)) {
				return Optional.empty();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockInterruptedException(request.key(), ex);
		}
		return Optional.of(new InMemoryLease(request, lock, this.tokens.incrementAndGet()));
	}

	/** Every request this service was asked for, in order. */
	public List<LockRequest> requests() {
		return this.requests;
	}

	/** Whether some thread holds {@code key} now. */
	@Override
	public boolean isLocked(String key) {
		ReentrantLock lock = this.locks.get(key);
		return lock != null && lock.isLocked();
	}

	@Override
	public Optional<LockHolder> holder(String key) {
		ReentrantLock lock = this.locks.get(key);
		if (lock == null || !lock.isLocked()) {
			return Optional.empty();
		}
		return Optional.of(new LockHolder(key, Math.max(1, lock.getHoldCount()), Duration.ofDays(1), this.tokens.get()));
	}

	/** One hold of a key's {@link ReentrantLock}. */
	public static final class InMemoryLease implements Lease {

		private final LockRequest request;

		private final ReentrantLock lock;

		private final long token;

		private final String owner = "in-memory:" + Thread.currentThread().getId();

		private final AtomicBoolean released = new AtomicBoolean();

		InMemoryLease(LockRequest request, ReentrantLock lock, long token) {
			this.request = request;
			this.lock = lock;
			this.token = token;
		}

		@Override
		public String key() {
			return this.request.key();
		}

		@Override
		public String name() {
			return this.request.effectiveName();
		}

		@Override
		public String owner() {
			return this.owner;
		}

		@Override
		public long fencingToken() {
			return this.token;
		}

		@Override
		public Duration ttl() {
			return this.request.ttl();
		}

		@Override
		public boolean isAutoRenewed() {
			return this.request.autoRenew();
		}

		@Override
		public boolean isHeld() {
			return !this.released.get();
		}

		@Override
		public boolean isLost() {
			return false;
		}

		@Override
		public boolean isOwned() {
			return isHeld();
		}

		@Override
		public Instant validUntil() {
			return isHeld() ? Instant.MAX : Instant.now();
		}

		@Override
		public void extend(Duration time, ExtendMode mode) {
			checkHeld();
		}

		@Override
		public void renew() {
			checkHeld();
		}

		@Override
		public void release() {
			if (!this.released.compareAndSet(false, true)) {
				throw new LockNotOwnedException(key(), this.owner, "Lock '" + key() + "' was already released");
			}
			this.lock.unlock();
		}

		@Override
		public void close() {
			if (isHeld()) {
				release();
			}
		}

		private void checkHeld() {
			if (!isHeld()) {
				throw new LockNotOwnedException(key(), this.owner, "Lock '" + key() + "' was already released");
			}
		}

	}

}
