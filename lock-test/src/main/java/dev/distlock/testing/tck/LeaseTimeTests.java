package dev.distlock.testing.tck;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Lease times: the watchdog keeps a renewed lease, a fixed one expires, extensions add or replace time. */
abstract class LeaseTimeTests extends WaitingTests {

	/** Room, on real time, for the calls between an extension and the question that checks it. */
	private static final Duration SLACK = Duration.ofSeconds(4);


	/** A renewed lease is kept past its lease time while held: still owned, the key still held for others. */
	@Test
	void aRenewedLeaseOutlivesItsLeaseTime() {
		String key = key("kept");
		LockService service = instance();
		LockService other = instance();
		Lease lease = service.acquire(key, shortTtl(), Duration.ZERO);
		passTime(shortTtl().multipliedBy(3).dividedBy(2));
		assertThat(lease.isHeld()).isTrue();
		assertThat(lease.isOwned()).isTrue();
		assertThat(lease.isLost()).isFalse();
		assertThat(other.tryAcquire(key, LONG_TTL, Duration.ZERO)).isEmpty();
		assertThat(other.holder(key)).hasValueSatisfying(
				(holder) -> assertThat(holder.remainingTtl()).isPositive().isLessThanOrEqualTo(shortTtl()));
		lease.release();
		assertThat(other.isLocked(key)).isFalse();
	}

	/**
	 * A fixed lease is gone from the store at its lease time (not before, where the test controls time); the next
	 * holder gets a greater token, and the former holder finds its lease lost at its release ({@code EXPIRED}; on real
	 * time an engine whose clock has not told it yet may find the store's expiry first, {@code FOUND_GONE_BY_HOLDER}),
	 * having been told of the loss once, as a {@link LockLostEvent}, by then.
	 */
	@Test
	void aFixedLeaseExpiresAtItsLeaseTime() {
		String key = key("expiring");
		List<LockLostEvent> losses = newLosses();
		LockService service = instance(losses, newEvents());
		LockService other = instance();
		Lease lease = service.acquire(request(key, shortTtl(), Duration.ZERO).withFixedLease());
		assertThat(lease.isAutoRenewed()).isFalse();
		if (timeIsControlled()) {
			passTime(shortTtl().minusMillis(1));
			assertThat(lease.isHeld()).isTrue();
			assertThat(other.isLocked(key)).isTrue();
			passTime(Duration.ofMillis(1));
		}
		else {
			passTime(shortTtl());
		}
		awaitFree(other, key);
		assertThat(lease.isHeld()).isFalse();
		Lease next = other.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		assertThat(lease.isOwned()).isFalse();
		List<LockLostEvent.Detection> detections = timeIsControlled() ? List.of(LockLostEvent.Detection.EXPIRED)
				: List.of(LockLostEvent.Detection.EXPIRED, LockLostEvent.Detection.FOUND_GONE_BY_HOLDER);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies((ex) -> assertThat(ex.getDetection()).isIn(detections));
		assertThat(awaitLosses(losses, 1)).singleElement().satisfies((event) -> {
			assertThat(event.key()).isEqualTo(key);
			assertThat(event.fencingToken()).isEqualTo(lease.fencingToken());
			assertThat(event.detection()).isIn(detections);
		});
		assertThat(next.isOwned()).isTrue();
		next.release();
	}

	/**
	 * {@code extend(t)} adds {@code t} to what is left, {@code extend(t, REPLACE)} sets what is left to {@code t}
	 * (shorter too), {@code renew()} sets it to the lease time; the store's remaining time says so.
	 */
	@Test
	void extensionsAddOrReplaceAndRenewalResets() {
		String key = key("extended");
		LockService service = instance();
		Lease lease = service.acquire(request(key, Duration.ofSeconds(10), Duration.ZERO).withFixedLease());
		lease.extend(Duration.ofSeconds(20));
		assertRemaining(service, key, Duration.ofSeconds(30));
		lease.renew();
		assertRemaining(service, key, Duration.ofSeconds(10));
		lease.extend(Duration.ofSeconds(10), ExtendMode.REPLACE);
		assertRemaining(service, key, Duration.ofSeconds(10));
		lease.extend(Duration.ofSeconds(10), ExtendMode.ADD);
		assertRemaining(service, key, Duration.ofSeconds(20));
		lease.extend(Duration.ofSeconds(3), ExtendMode.REPLACE);
		assertThat(remaining(service, key)).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(3));
		assertThat(lease.validUntil()).isBeforeOrEqualTo(now().plusSeconds(3));
		if (timeIsControlled()) {
			passTime(Duration.ofSeconds(2));
			assertThat(remaining(service, key)).isEqualTo(Duration.ofSeconds(1));
		}
		assertThat(lease.isOwned()).isTrue();
		lease.release();
	}

	/**
	 * A replaced lease time is what the watchdog renews a renewed lease to from then on: the lease is kept past it,
	 * and never longer than it in the store.
	 */
	@Test
	void aReplacedLeaseTimeIsWhatTheWatchdogRenewsTo() {
		String key = key("rescheduled");
		LockService service = instance();
		Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
		lease.extend(shortTtl(), ExtendMode.REPLACE);
		passTime(shortTtl().multipliedBy(3).dividedBy(2));
		assertThat(lease.isOwned()).isTrue();
		assertThat(lease.isLost()).isFalse();
		assertThat(remaining(service, key)).isPositive().isLessThanOrEqualTo(shortTtl());
		lease.release();
	}

	/** {@code validUntil} is the end of the lease as the store last confirmed it, in the past once released. */
	@Test
	void validUntilIsWhatTheStoreLastConfirmed() {
		String key = key("validity");
		LockService service = instance();
		Instant before = now();
		Lease lease = service.acquire(request(key, Duration.ofSeconds(10), Duration.ZERO).withFixedLease());
		Instant after = now();
		assertThat(lease.validUntil()).isAfter(before.plusSeconds(10).minus(SLACK)).isBeforeOrEqualTo(after.plusSeconds(10));
		lease.extend(Duration.ofSeconds(2), ExtendMode.REPLACE);
		assertThat(lease.validUntil()).isBeforeOrEqualTo(now().plusSeconds(2));
		lease.release();
		assertThat(lease.validUntil()).isBeforeOrEqualTo(now());
	}

	/** Extensions out of range, or without a mode, are refused naming the key, and change nothing. */
	@Test
	void invalidExtensionsAreRefusedNamingTheKey() {
		String key = key("badly-extended");
		LockService service = instance();
		try (Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO)) {
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ZERO, ExtendMode.REPLACE))
				.withMessageContaining(key);
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofNanos(500), ExtendMode.ADD))
				.withMessageContaining(key);
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofSeconds(-1)))
				.withMessageContaining(key);
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofSeconds(1), null))
				.withMessageContaining(key);
			assertThatIllegalArgumentException().isThrownBy(() -> lease.extend(Duration.ofDays(366)))
				.withMessageContaining(key);
			assertThat(lease.isOwned()).isTrue();
			assertThat(remaining(service, key)).isGreaterThan(LONG_TTL.minus(SLACK.multipliedBy(2)));
		}
	}

	/** What the store has left of the lease on {@code key}: {@code expected}, or a little less on real time. */
	private void assertRemaining(LockService service, String key, Duration expected) {
		Duration remaining = remaining(service, key);
		if (timeIsControlled()) {
			assertThat(remaining).isEqualTo(expected);
		}
		else {
			assertThat(remaining).isGreaterThan(expected.minus(SLACK)).isLessThanOrEqualTo(expected);
		}
	}

	private static Duration remaining(LockService service, String key) {
		return service.holder(key).map(LockHolder::remainingTtl).orElseThrow();
	}

}
