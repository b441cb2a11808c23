package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A lease gone from the store (deleted by an operator, expired in a pause) is lost: its holder is told once, in every
 * way the API has (the listeners, the application event, {@link Lease#onLost}, {@link LockLostException}), and the key
 * is another's.
 */
abstract class LostLeaseTests extends StoreQueryTests {


	/**
	 * The holder's question finds its lease gone: not owned, lost, no longer valid; one loss heard and published; its
	 * release, renewal and extension fail with {@link LockLostException}; the key is another owner's, with a greater
	 * token.
	 */
	@Test
	void aLeaseGoneFromTheStoreIsFoundLostByItsHolder() {
		String key = key("taken");
		List<LockLostEvent> losses = newLosses();
		List<Object> published = newEvents();
		LockService service = instance(losses, published);
		LockService other = instance();
		Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
		loseLease(lease);
		Lease thief = other.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(thief.fencingToken()).isGreaterThan(lease.fencingToken());

		assertThat(lease.isOwned()).isFalse();
		assertThat(lease.isLost()).isTrue();
		assertThat(lease.isHeld()).isFalse();
		assertThat(lease.validUntil()).isBeforeOrEqualTo(now());
		assertThat(lease.isOwned()).isFalse();
		// the holder's question found it, unless the watchdog was quicker
		List<LockLostEvent.Detection> detections = List.of(LockLostEvent.Detection.FOUND_GONE_BY_HOLDER,
				LockLostEvent.Detection.RENEWAL_FOUND_GONE);
		LockLostEvent loss = awaitLosses(losses, 1).get(0);
		assertThat(loss.key()).isEqualTo(key);
		assertThat(loss.owner()).isEqualTo(lease.owner());
		assertThat(loss.holder()).isEqualTo(lease.holder());
		assertThat(loss.fencingToken()).isEqualTo(lease.fencingToken());
		assertThat(loss.detection()).isIn(detections);
		await().atMost(PATIENCE).until(() -> published.size() == 1);
		assertThat(published).singleElement().isEqualTo(loss);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> lease.extend(Duration.ofSeconds(1)))
			.withMessageContaining(key);
		// the message names the holder by its label, never by the owner id a release presents to the store
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::renew)
			.withMessageContaining(lease.holder().toString())
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain(lease.owner()));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies((ex) -> assertThat(ex.getDetection()).isEqualTo(loss.detection()));
		assertThat(losses).hasSize(1);
		assertThat(thief.isOwned()).isTrue();
		assertThat(other.holder(key)).hasValueSatisfying((holder) -> {
			if (holderReportsTheLeasesOwnToken()) {
				assertThat(holder.fencingToken()).isEqualTo(thief.fencingToken());
			}
			else {
				assertThat(holder.fencingToken()).isGreaterThanOrEqualTo(thief.fencingToken());
			}
		});
		thief.release();
	}

	/**
	 * The {@code onLost} actions of the lease's holds run once when the loss is found; one registered after it runs at
	 * once; those of a hold released before the loss never run.
	 */
	@Test
	void aLossRunsTheOnLostActionsOfItsHoldsOnce() {
		String key = key("on-lost");
		LockService service = instance();
		Lease outer = service.acquire(key, LONG_TTL, Duration.ZERO);
		Lease inner = service.acquire(key, LONG_TTL, Duration.ZERO);
		Lease released = service.acquire(key, LONG_TTL, Duration.ZERO);
		List<String> ran = new CopyOnWriteArrayList<>();
		List<LockLostEvent> events = new CopyOnWriteArrayList<>();
		outer.onLost((event) -> {
			ran.add("outer");
			events.add(event);
		});
		inner.onLost((event) -> {
			ran.add("inner");
			events.add(event);
		});
		released.onLost((event) -> ran.add("released"));
		released.release();
		loseLease(outer);
		assertThat(outer.isOwned()).isFalse();
		await().atMost(PATIENCE).until(() -> ran.size() >= 2);
		assertThat(ran).containsExactlyInAnyOrder("outer", "inner");
		assertThat(events).allSatisfy((event) -> {
			assertThat(event.key()).isEqualTo(key);
			assertThat(event.fencingToken()).isEqualTo(outer.fencingToken());
		});
		List<LockLostEvent> late = new CopyOnWriteArrayList<>();
		inner.onLost(late::add);
		await().atMost(PATIENCE).until(() -> late.size() == 1);
		assertThat(late).containsExactly(events.get(0));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(inner::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(outer::release);
		assertThat(ran).as("actions run, the released hold's never").containsExactlyInAnyOrder("outer", "inner");
	}

	/** The watchdog finds a renewed lease gone without the holder asking, within about one renewal. */
	@Test
	void theWatchdogFindsARenewedLeaseGone() {
		String key = key("deleted");
		List<LockLostEvent> losses = newLosses();
		LockService service = instance(losses, newEvents());
		Lease lease = service.acquire(key, shortTtl(), Duration.ZERO);
		loseLease(lease);
		passTime(shortTtl());
		await().atMost(PATIENCE).until(lease::isLost);
		assertThat(lease.isHeld()).isFalse();
		// found by a renewal; on real time, a stall past the lease time lets the watchdog's clock find it first
		assertThat(awaitLosses(losses, 1).get(0).detection()).isIn(LockLostEvent.Detection.RENEWAL_FOUND_GONE,
				LockLostEvent.Detection.RENEWAL_FAILED);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
	}

	/**
	 * A listener that throws when told of a loss breaks its own contract, not the engine's: the failure is logged, the
	 * listeners after it are still told, the loss still runs the lease's {@code onLost} actions and is published, the
	 * holder's question still answers, and the instance goes on finding and telling losses. Both Redis engines and the
	 * in-memory one behave so; the single-node engine used to let the listener's exception through.
	 */
	@Test
	void aListenerThatThrowsOnALossKeepsNeitherTheOtherListenersNorTheEngineFromGoingOn() {
		String key = key("listener-throws");
		List<LockLostEvent> losses = newLosses();
		List<Object> published = newEvents();
		LockListener throwing = new LockListener() {

			@Override
			public void lost(LockLostEvent event) {
				throw new IllegalStateException("A listener that breaks its contract (thrown on purpose by the TCK)");
			}

		};
		LockListener recording = new LockListener() {

			@Override
			public void lost(LockLostEvent event) {
				losses.add(event);
			}

		};
		LockService service = instance(new Options(List.of(throwing, recording), published::add));
		LockService other = instance();
		Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
		List<LockLostEvent> actions = new CopyOnWriteArrayList<>();
		lease.onLost(actions::add);
		loseLease(lease);
		assertThat(lease.isOwned()).as("the holder's question answers, whatever the listeners throw").isFalse();
		LockLostEvent loss = awaitLosses(losses, 1).get(0);
		assertThat(loss.key()).isEqualTo(key);
		assertThat(loss.fencingToken()).isEqualTo(lease.fencingToken());
		await().atMost(PATIENCE).until(() -> actions.size() == 1 && published.size() == 1);
		assertThat(actions).containsExactly(loss);
		assertThat(published).containsExactly(loss);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		Lease thief = other.acquire(key, LONG_TTL, Duration.ZERO);
		thief.release();
		// the engine goes on: a later lease is granted, and its loss found by the watchdog is told again
		Lease later = service.acquire(key("listener-throws-later"), shortTtl(), Duration.ZERO);
		loseLease(later);
		passTime(shortTtl());
		await().atMost(PATIENCE).until(later::isLost);
		assertThat(awaitLosses(losses, 2).get(1).key()).isEqualTo(later.key());
		assertThatExceptionOfType(LockLostException.class).isThrownBy(later::release);
	}

}
