package dev.distlock.testing.tck;

import java.time.Duration;
import java.time.Instant;

import dev.distlock.core.Lease;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Asking the store, not an instance's own picture: who holds a key, whether a lease is still its holder's. */
abstract class StoreQueryTests extends LeaseTimeTests {


	/** {@code isLocked} and {@code holder} tell every instance who holds a key: the holds, the token, the time left. */
	@Test
	void isLockedAndHolderAskTheStoreWhateverInstanceHoldsTheKey() {
		String key = key("asked");
		LockService holderInstance = instance();
		LockService asker = instance();
		assertThat(asker.isLocked(key)).isFalse();
		assertThat(asker.holder(key)).isEmpty();
		Lease outer = holderInstance.acquire(key, LONG_TTL, Duration.ZERO);
		Lease inner = holderInstance.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(asker.isLocked(key)).isTrue();
		assertThat(asker.holder(key)).hasValueSatisfying((holder) -> {
			assertThat(holder.key()).isEqualTo(key);
			assertThat(holder.holds()).isEqualTo(2);
			if (holderReportsTheLeasesOwnToken()) {
				assertThat(holder.fencingToken()).isEqualTo(outer.fencingToken());
			}
			else {
				assertThat(holder.fencingToken()).isGreaterThanOrEqualTo(outer.fencingToken());
			}
			assertThat(holder.remainingTtl()).isPositive().isLessThanOrEqualTo(LONG_TTL);
			// who holds it, by the label the holder's lease stored (issue 29)
			assertThat(holder.holder()).isEqualTo(outer.holder().toString());
		});
		inner.release();
		assertThat(asker.holder(key)).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(1));
		outer.release();
		assertThat(asker.isLocked(key)).isFalse();
		assertThat(asker.holder(key)).isEmpty();
	}

	/** A lease is owned from its acquisition until its release; another instance's attempt does not change that. */
	@Test
	void aLeaseIsOwnedFromItsAcquisitionUntilItsRelease() {
		String key = key("owned");
		LockService service = instance();
		LockService other = instance();
		Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(lease.isOwned()).isTrue();
		assertThat(other.tryAcquire(key, LONG_TTL, Duration.ZERO)).isEmpty();
		assertThat(lease.isOwned()).isTrue();
		lease.release();
		assertThat(lease.isOwned()).isFalse();
		Lease next = other.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(next.isOwned()).isTrue();
		assertThat(lease.isOwned()).as("the released handle, with the key held by another owner").isFalse();
		next.release();
	}

	/** On a clock of the test's, a fixed lease's remaining time and validity count down exactly with the clock. */
	@Test
	void theTimeLeftCountsDownWithTheClock() {
		assumeTrue(timeIsControlled(), "time is controlled by the test");
		String key = key("counting-down");
		LockService service = instance();
		Lease lease = service.acquire(request(key, Duration.ofSeconds(10), Duration.ZERO).withFixedLease());
		Instant validUntil = lease.validUntil();
		passTime(Duration.ofSeconds(4));
		assertThat(service.holder(key)).hasValueSatisfying(
				(holder) -> assertThat(holder.remainingTtl()).isEqualTo(Duration.ofSeconds(6)));
		assertThat(lease.validUntil()).isEqualTo(validUntil);
		assertThat(lease.isHeld()).isTrue();
		lease.release();
	}

}
