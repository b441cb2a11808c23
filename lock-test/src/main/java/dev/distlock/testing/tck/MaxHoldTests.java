package dev.distlock.testing.tck;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The longest hold ({@link LockRequest#maxHold()}): a renewed lease is renewed until it has been held that long, then
 * it is lost ({@link LockLostEvent.Detection#MAX_HOLD_EXCEEDED}) and told as every loss is; a re-entry neither restarts
 * nor changes the cap.
 */
abstract class MaxHoldTests extends LostLeaseTests {

	/**
	 * Slack for the engine's clock against the test's on real time: the loss comes no earlier than the cap after the
	 * acquisition was sent, which is after the test read its clock, but the two clocks are read apart.
	 */
	private static final Duration CLOCK_SLACK = Duration.ofMillis(100);

	/**
	 * A renewed lease outlives its lease time (renewed) until its maxHold, twice the lease time; then it is lost as
	 * {@code MAX_HOLD_EXCEEDED}: not held, listed as lost, the listeners, the application event and the {@code onLost}
	 * action hear of it once, its release throws {@link LockLostException} with that detection, and then the key is
	 * free.
	 */
	@Test
	void aRenewedLeaseIsLostAtItsMaxHold() {
		String key = key("max-hold");
		Duration ttl = shortTtl();
		Duration maxHold = ttl.multipliedBy(2);
		List<LockLostEvent> losses = newLosses();
		List<Object> published = newEvents();
		LockService service = instance(losses, published);
		Instant before = now();
		Lease lease = service.acquire(LockRequest.of(key, ttl, Duration.ZERO).withMaxHold(maxHold));
		List<LockLostEvent> told = new CopyOnWriteArrayList<>();
		lease.onLost(told::add);
		if (timeIsControlled()) {
			passTime(maxHold.minusMillis(1));
			assertThat(lease.isHeld()).as("held, renewed, until the cap").isTrue();
			assertThat(lease.isLost()).isFalse();
			assertThat(losses).isEmpty();
			passTime(Duration.ofMillis(1));
		}
		else {
			passTime(ttl.plus(ttl.dividedBy(2)));
			// past its lease time: only renewals kept it (a loss now would be by the renewals, not by the cap)
			assertThat(losses).as("no loss before the cap").isEmpty();
		}
		await().atMost(maxHold.plus(PATIENCE)).until(lease::isLost);
		LockLostEvent loss = awaitLosses(losses, 1).get(0);
		assertThat(loss.detection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
		assertThat(loss.key()).isEqualTo(key);
		assertThat(loss.fencingToken()).isEqualTo(lease.fencingToken());
		assertThat(loss.detectedAt()).isAfterOrEqualTo(before.plus(maxHold).minus(timeIsControlled() ? Duration.ZERO
				: CLOCK_SLACK));
		assertThat(lease.isHeld()).isFalse();
		await().atMost(PATIENCE).until(() -> told.size() == 1 && published.size() == 1);
		assertThat(told).containsExactly(loss);
		assertThat(published).containsExactly(loss);
		if (service instanceof LockOperatorView view) {
			assertThat(view.activeLeases()).filteredOn((snapshot) -> snapshot.key().equals(key))
				.singleElement()
				.satisfies((snapshot) -> assertThat(snapshot.lost()).isTrue())
				.extracting(LeaseSnapshot::lastRenewal)
				.as("renewed before the cap")
				.isNotNull();
		}
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies((ex) -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED))
			.withMessageContaining(key);
		assertThat(losses).hasSize(1);
		awaitFree(service, key);
		instance().acquire(key, LONG_TTL, Duration.ZERO).release();
	}

	/**
	 * The cap counts from the first acquisition of the lease and is the first acquisition's: a re-entry later, with a
	 * cap of its own, neither restarts nor widens it; every hold sees the loss.
	 */
	@Test
	void aReentryNeitherRestartsNorChangesTheCap() {
		String key = key("max-hold-reentry");
		Duration ttl = shortTtl();
		Duration maxHold = ttl.multipliedBy(2);
		List<LockLostEvent> losses = newLosses();
		LockService service = instance(losses, newEvents());
		Instant before = now();
		Lease outer = service.acquire(LockRequest.of(key, ttl, Duration.ZERO).withMaxHold(maxHold));
		passTime(ttl);
		Lease inner = service.acquire(LockRequest.of(key, ttl, Duration.ZERO).withMaxHold(LONG_TTL.multipliedBy(10)));
		assertThat(inner.fencingToken()).as("a re-entry").isEqualTo(outer.fencingToken());
		if (timeIsControlled()) {
			passTime(maxHold.minus(ttl));
		}
		await().atMost(maxHold.plus(PATIENCE)).until(outer::isLost);
		assertThat(inner.isLost()).isTrue();
		LockLostEvent loss = awaitLosses(losses, 1).get(0);
		assertThat(loss.detection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
		assertThat(loss.detectedAt()).as("at the outer cap, not restarted by the re-entry")
			.isBefore(before.plus(maxHold).plus(ttl));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(inner::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(outer::release);
	}

	/** A request whose maxHold is shorter than its lease time is refused before any engine sees it, naming the key. */
	@Test
	void aMaxHoldShorterThanTheLeaseTimeIsRefusedNamingTheKey() {
		String key = key("max-hold-short");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> LockRequest.of(key, Duration.ofSeconds(10), Duration.ZERO).withMaxHold(Duration.ofSeconds(5)))
			.withMessageContaining("'maxHold' of lock '" + key + "'")
			.withMessageContaining("must be at least the lease time");
		assertThat(instance().isLocked(key)).isFalse();
	}

}
