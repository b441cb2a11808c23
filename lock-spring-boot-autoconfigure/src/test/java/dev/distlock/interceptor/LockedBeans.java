package dev.distlock.interceptor;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.Lease;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AliasFor;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Annotated beans the interceptor tests call; each records what it saw while running under its lock. */
public final class LockedBeans {

	private LockedBeans() {
	}

	/**
	 * What a locked method saw: its lease (from {@link LockContext}), all its leases, the hold count stored in Redis
	 * for its first key and for every key, the first key's remaining lease time in Redis (PTTL, in ms), whether the
	 * store said the lease was still ours ({@link Lease#isOwned()}), and until when it was valid then.
	 */
	public record Observation(Lease lease, List<Lease> leases, @Nullable Object holdsInRedis,
			List<@Nullable Object> allHoldsInRedis, @Nullable Long pttlInRedis, boolean ownedInStore,
			Instant validUntil, Instant observedAt) {
	}

	static Observation observe(StringRedisTemplate redis) {
		Lease lease = LockContext.current().orElseThrow(() -> new AssertionError("no lease in the lock context"));
		List<Lease> leases = LockContext.currentLeases();
		leases.forEach(LockedBeans::assertHeld);
		List<@Nullable Object> holds = new ArrayList<>();
		for (Lease each : leases) {
			holds.add(redis.opsForHash().get("lock:{" + each.key() + "}", each.owner()));
		}
		Instant observedAt = Instant.now();
		return new Observation(lease, leases, holds.get(0), holds,
				redis.getExpire("lock:{" + lease.key() + "}", TimeUnit.MILLISECONDS), lease.isOwned(), lease.validUntil(),
				observedAt);
	}

	private static void assertHeld(Lease lease) {
		if (!lease.isHeld()) {
			throw new AssertionError("lease not held inside the locked method: " + lease);
		}
	}

	/** A team's own lock annotation. */
	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@DistributedLock(ttl = "10s", waitTime = "0", name = "inventory")
	public @interface InventoryLock {

		@AliasFor(annotation = DistributedLock.class, attribute = "key")
		String sku();

	}

	public interface Accounts {

		@DistributedLock(key = "'account:' + #id", ttl = "10s", waitTime = "0")
		Observation touch(String id);

	}

	public static class DefaultAccounts implements Accounts {

		private final StringRedisTemplate redis;

		DefaultAccounts(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@Override
		public Observation touch(String id) {
			return observe(this.redis);
		}

	}

	public static class Inventory {

		private final StringRedisTemplate redis;

		private final String warehouse = "north";

		private final AtomicInteger calls = new AtomicInteger();

		Inventory(StringRedisTemplate redis) {
			this.redis = redis;
		}

		/** How many times a locked method body ran. */
		public int calls() {
			return this.calls.get();
		}

		/** A property of the target, for keys that use {@code #root.target}. */
		public String getWarehouse() {
			return this.warehouse;
		}

		@DistributedLock(key = "#root.method.name + ':' + #sku", ttl = "10s", waitTime = "0")
		public Observation byMethodName(String sku) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@DistributedLock(key = "#root.target.warehouse + ':' + #root.targetClass.simpleName + ':' + #sku", ttl = "10s",
				waitTime = "0")
		public Observation byTarget(String sku) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@DistributedLock(key = "#skus", ttl = "10s", waitTime = "0")
		public Observation reserveArray(String... skus) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		/** The key expression yields a {@code String[]}: one key per comma-separated SKU. */
		@DistributedLock(key = "#skuList.split(',')", ttl = "10s", waitTime = "0")
		public Observation reserveSplit(String skuList) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		// 6 s, renewed every 2 s: no stall of a loaded machine loses it before the test reads its PTTL
		@DistributedLock(key = "#sku", ttl = "PT6S", waitTime = "PT0.3S")
		public Observation isoDurations(String sku) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@InventoryLock(sku = "'sku:' + #sku")
		public Observation reserve(String sku) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@DistributedLock(key = "#skus", ttl = "10s", waitTime = "${test.wait:0}")
		public Observation reserveAll(Collection<String> skus) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@DistributedLock(key = "#order.sku()", ttl = "10s", waitTime = "0")
		public Observation place(Order order) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@DistributedLock(key = "#p0 + ':' + @regions.current()", ttl = "10s", waitTime = "0")
		public Observation regional(String sku) {
			this.calls.incrementAndGet();
			return observe(this.redis);
		}

		@DistributedLock(key = "#sku", waitTime = "0", onFailure = OnLockFailure.SKIP)
		public Optional<String> skipWhenBusy(String sku) {
			this.calls.incrementAndGet();
			return Optional.of("ran");
		}

		@DistributedLock(key = "#sku", waitTime = "0", onFailure = OnLockFailure.SKIP)
		public int skipReturningInt(String sku) {
			this.calls.incrementAndGet();
			return 42;
		}

		@DistributedLock(key = "#sku", waitTime = "0", failureHandler = "busyHandler")
		public String handledWhenBusy(String sku) {
			this.calls.incrementAndGet();
			return "ran";
		}

		@DistributedLock(key = "#sku", waitTime = "0")
		public String throwWhenBusy(String sku) {
			this.calls.incrementAndGet();
			return "ran";
		}

		/** Holds a fixed lease until the test has deleted it, then returns normally (long enough for a loaded machine to see it). */
		@DistributedLock(key = "#sku", ttl = "5s", waitTime = "0", fixedLease = true)
		public String outlive(String sku, CountDownLatch leaseGone) throws InterruptedException {
			this.calls.incrementAndGet();
			if (!leaseGone.await(10, TimeUnit.SECONDS)) {
				throw new AssertionError("the test did not delete the lease");
			}
			return "finished";
		}

	}

	public record Order(String sku, int quantity) {
	}

	public static class Regions {

		public String current() {
			return "eu";
		}

	}

	/** Calls another locked bean on the same key: the nested call re-enters. */
	public static class Outer {

		private final Inventory inventory;

		private final StringRedisTemplate redis;

		Outer(Inventory inventory, StringRedisTemplate redis) {
			this.inventory = inventory;
			this.redis = redis;
		}

		@DistributedLock(key = "'sku:' + #sku", ttl = "10s", waitTime = "0")
		public List<Observation> reserveTwice(String sku) {
			List<Observation> seen = new ArrayList<>();
			seen.add(observe(this.redis));
			seen.add(this.inventory.reserve(sku));
			seen.add(observe(this.redis));
			return seen;
		}

	}

}
