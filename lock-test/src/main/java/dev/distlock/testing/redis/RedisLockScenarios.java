package dev.distlock.testing.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockSettings;
import dev.distlock.redis.RedisLockService;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.Assert;

/**
 * The scenarios of {@link dev.distlock.testing.LockScenarios} that make sense on a real Redis, for a test of an
 * application whose locks run on the Redis engine: another instance holds a key, a lease is lost. They act through a
 * {@link RedisLockService} of their own on the application's connection factory and key prefix, as another instance
 * of the application would.
 * <p>
 * What is not here cannot be made to happen on a real Redis from a test: time passes by itself (no {@code advance}),
 * Redis cannot be told to ignore some calls ({@code unreachableForNextCalls}; stop the server, or put a proxy in front
 * of it), and a Redis keeps no history of the locks (assert on a {@code LockListener} or the meters instead).
 *
 * <pre class="code">
 * try (RedisLockScenarios redis = RedisLockScenarios.of(connectionFactory, "lock")) {
 *     redis.holdElsewhere("inventory:sku-42", Duration.ofSeconds(5));
 *     // a purchase of sku-42 now answers lock-busy
 * }
 * </pre>
 * Close it at the end of the test: it releases the holds still held and closes its engine.
 *
 * @since 0.1.0
 */
public final class RedisLockScenarios implements AutoCloseable {

	/** The lease time of a hold kept until released: renewed by this engine's watchdog meanwhile. */
	private static final Duration RENEWED_TTL = Duration.ofSeconds(30);

	private final RedisLockService service;

	private final List<Hold> holds = new CopyOnWriteArrayList<>();

	private RedisLockScenarios(RedisLockService service) {
		this.service = service;
	}

	/**
	 * Scenarios on the Redis that {@code connectionFactory} connects to, for locks under {@code keyPrefix} (the
	 * application's {@code distlock.key-prefix}, {@code lock} by default).
	 * @param connectionFactory the application's connections to Redis (it stays the application's: not closed here)
	 * @param keyPrefix the prefix of the application's lock keys in Redis
	 * @return the scenarios
	 */
	public static RedisLockScenarios of(RedisConnectionFactory connectionFactory, String keyPrefix) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		return new RedisLockScenarios(RedisLockService.builder(connectionFactory).keyPrefix(keyPrefix).build());
	}

	/**
	 * Another instance holds {@code key} for {@code time}: a lease of that lease time that nobody renews, so Redis
	 * expires it then, unless the hold is {@linkplain Hold#release() released} before.
	 * @param key the application's lock key
	 * @param time how long the other instance holds it at most
	 * @return the hold
	 * @throws IllegalStateException if the key is held now
	 */
	public Hold holdElsewhere(String key, Duration time) {
		LockSettings.checkTtl(time, "'time' of lock '" + key + "'");
		return hold(LockRequest.of(key, time, Duration.ZERO).withFixedLease());
	}

	/**
	 * Another instance holds {@code key} until the hold is {@linkplain Hold#release() released} or these scenarios are
	 * closed: its watchdog renews the lease meanwhile.
	 * @param key the application's lock key
	 * @return the hold
	 * @throws IllegalStateException if the key is held now
	 */
	public Hold holdElsewhere(String key) {
		return hold(LockRequest.of(key, RENEWED_TTL, Duration.ZERO));
	}

	private Hold hold(LockRequest request) {
		Optional<Lease> lease;
		try (LockOwner.Binding owner = LockOwner.newOwner().bind()) {
			lease = this.service.tryAcquire(request);
		}
		Hold hold = new Hold(lease.orElseThrow(() -> new IllegalStateException("Lock '" + request.key()
				+ "' is held: release it before another instance can hold it")));
		this.holds.add(hold);
		return hold;
	}

	/**
	 * Delete the lease of {@code key} from Redis, whoever holds it, as an operator's forced release or a failover
	 * would: the key is free at once (its waiters are told), and each holder finds out at its next watchdog renewal or
	 * its next call on the lease (its release at the latest, a {@code LockLostException}). Unlike the in-memory
	 * engine's {@code loseNow}, Redis cannot tell a holder at the moment itself.
	 * @param key the application's lock key
	 * @return whether a lease was deleted
	 */
	public boolean loseNow(String key) {
		return this.service.forceRelease(key).isPresent();
	}

	/** Release the holds still held, and close this engine (not the connection factory). */
	@Override
	public void close() {
		this.holds.forEach(Hold::release);
		this.holds.clear();
		this.service.close();
	}

	/**
	 * A key held by another instance ({@link #holdElsewhere}), until it is released or its time runs out.
	 *
	 * @since 0.1.0
	 */
	public static final class Hold implements AutoCloseable {

		private final Lease lease;

		private Hold(Lease lease) {
			this.lease = lease;
		}

		/** {@return the lock key} */
		public String key() {
			return this.lease.key();
		}

		/** {@return the fencing token of this hold} */
		public long fencingToken() {
			return this.lease.fencingToken();
		}

		/** {@return whether Redis still has it, as of the last time it was asked} */
		public boolean isHeld() {
			return this.lease.isOwned();
		}

		/**
		 * Release it, handing the key to its waiters.
		 * @return whether it was still held (false when its time had run out or it was lost)
		 */
		public boolean release() {
			try {
				this.lease.release();
				return true;
			}
			catch (RuntimeException ex) {
				return false;
			}
		}

		/** As {@link #release()}. */
		@Override
		public void close() {
			release();
		}

	}

}
