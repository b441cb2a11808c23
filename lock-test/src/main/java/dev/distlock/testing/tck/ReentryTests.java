package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.Optional;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** An owner (a thread, or an owner bound to threads) re-enters its lease; the key is freed by its last release. */
abstract class ReentryTests extends MutualExclusionTests {


	/**
	 * A thread acquiring a key it holds re-enters its lease: the same fencing token, one more hold in the store; other
	 * threads and instances get the key only after the last hold is released, with a greater token.
	 */
	@Test
	void reentersToDepthThreeAndFreesTheKeyOnlyAfterTheLastRelease() {
		String key = key("order-1");
		LockService service = instance();
		LockService other = instance();
		Lease first = service.acquire(key, LONG_TTL, Duration.ZERO);
		Lease second = service.acquire(key, LONG_TTL, Duration.ZERO);
		Lease third = service.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(second.fencingToken()).isEqualTo(first.fencingToken());
		assertThat(third.fencingToken()).isEqualTo(first.fencingToken());
		assertThat(other.holder(key)).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(3));

		assertThat(tryOnceElsewhere(service, key)).as("another thread of the same instance").isEmpty();
		third.release();
		assertThat(tryOnceElsewhere(service, key)).isEmpty();
		assertThat(tryOnceElsewhere(other, key)).as("another instance").isEmpty();
		second.release();
		assertThat(other.holder(key)).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(1));
		assertThat(tryOnceElsewhere(other, key)).isEmpty();
		first.release();
		Optional<Lease> next = tryOnceElsewhere(other, key);
		assertThat(next).isPresent();
		assertThat(next.get().fencingToken()).isGreaterThan(first.fencingToken());
		next.get().release();
		assertThat(first.isHeld()).isFalse();
		assertThat(other.isLocked(key)).isFalse();
	}

	/**
	 * An owner of its own ({@link LockOwner#newOwner()}), bound to one thread and then to another, re-enters its lease
	 * from both; a thread it is not bound to does not.
	 */
	@Test
	void anOwnerBoundToThreadsReentersFromEachOfThem() {
		String key = key("bound");
		LockService service = instance();
		LockOwner owner = LockOwner.newOwner();
		Lease outer = get(inBackground(() -> {
			try (LockOwner.Binding binding = owner.bind()) {
				return service.acquire(key, LONG_TTL, Duration.ZERO);
			}
		}));
		Lease inner = get(inBackground(() -> {
			try (LockOwner.Binding binding = owner.bind()) {
				return service.acquire(key, LONG_TTL, Duration.ZERO);
			}
		}));
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(inner.owner()).isEqualTo(outer.owner());
		assertThat(inner.holder()).isEqualTo(outer.holder());
		assertThat(tryOnceElsewhere(service, key)).as("a thread the owner is not bound to").isEmpty();
		inner.release();
		assertThat(service.isLocked(key)).isTrue();
		outer.release();
		assertThat(service.isLocked(key)).isFalse();
	}

	/**
	 * The holder label that log lines and messages name a lease's holder by (never its owner id): a thread's lease
	 * names the thread, an owner of its own its description; never the owner id.
	 */
	@Test
	void theHolderLabelNamesTheThreadOrTheOwnersDescription() {
		String key = key("labelled");
		LockService service = instance();
		Lease threads = get(inBackground(() -> service.acquire(key, LONG_TTL, Duration.ZERO)));
		assertThat(threads.holder().ownerDescription()).startsWith("thread \"tck-caller-").endsWith("\"");
		assertThat(threads.holder().toString()).doesNotContain(threads.owner());
		threads.release();
		LockOwner owner = LockOwner.newOwner("async Tck.work");
		Lease owners = get(inBackground(() -> {
			try (LockOwner.Binding binding = owner.bind()) {
				return service.acquire(key, LONG_TTL, Duration.ZERO);
			}
		}));
		assertThat(owners.holder().ownerDescription()).isEqualTo("async Tck.work");
		owners.release();
	}

	/** Re-entries of a fixed lease and of a renewed one are released one by one, in any order. */
	@Test
	void holdsAreReleasedInAnyOrder() {
		String key = key("any-order");
		LockService service = instance();
		Lease renewed = service.acquire(key, LONG_TTL, Duration.ZERO);
		Lease fixed = service.acquire(request(key, LONG_TTL, Duration.ZERO).withFixedLease());
		assertThat(fixed.fencingToken()).isEqualTo(renewed.fencingToken());
		renewed.release();
		assertThat(fixed.isHeld()).isTrue();
		assertThat(fixed.isOwned()).isTrue();
		assertThat(service.holder(key)).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(1));
		fixed.release();
		assertThat(service.isLocked(key)).isFalse();
	}

}
