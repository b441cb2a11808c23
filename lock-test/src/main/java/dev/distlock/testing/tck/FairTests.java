package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Fair locks ({@link LockMode#FAIR}): waiters of every instance get the key in the order they came. */
abstract class FairTests extends AsynchronousTests {


	/** Skips the test for an engine without fair locks. */
	private void assumeFairLocks() {
		assumeTrue(supports(LockMode.FAIR), "the engine does not support fair locks");
	}

	private static LockRequest fair(String key, Duration wait) {
		return LockRequest.of(key, LONG_TTL, wait).fair();
	}

	/**
	 * Four instances queue for a fair key one after the other (each joins once the one before is in the queue); the
	 * release hands the key down the queue in that order.
	 */
	@Test
	void fairWaitersGetTheKeyInTheOrderTheyCame() {
		assumeFairLocks();
		String key = key("fair");
		LockService holder = instance();
		LockOperatorView queue = view(holder);
		Lease held = holder.acquire(fair(key, Duration.ZERO));
		assumeTrue(queue.fairQueueLength(key) >= 0, "the engine does not tell the fair queue's length");
		List<Integer> order = new CopyOnWriteArrayList<>();
		List<Future<Long>> waiters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			int place = i;
			LockService waiter = instance();
			waiters.add(inBackground(() -> {
				try (Lease lease = waiter.acquire(fair(key, LONG_WAIT))) {
					order.add(place);
					return lease.fencingToken();
				}
			}));
			await().atMost(PATIENCE).until(() -> queue.fairQueueLength(key) == place + 1);
		}
		held.release();
		List<Long> tokens = waiters.stream().map(LockServiceTckSupport::get).toList();
		assertThat(order).containsExactly(0, 1, 2, 3);
		assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
		assertThat(tokens.get(0)).isGreaterThan(held.fencingToken());
		assertThat(queue.fairQueueLength(key)).isZero();
	}

	/** A fair lease is reentrant, and the next holder's token is greater. */
	@Test
	void aFairLeaseIsReentrant() {
		assumeFairLocks();
		String key = key("fair-reentry");
		LockService service = instance();
		LockService other = instance();
		Lease outer = service.acquire(fair(key, Duration.ZERO));
		Lease inner = service.acquire(fair(key, Duration.ZERO));
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(other.holder(key)).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(2));
		assertThat(other.tryAcquire(fair(key, Duration.ZERO))).isEmpty();
		inner.release();
		outer.release();
		Optional<Lease> next = other.tryAcquire(fair(key, Duration.ZERO));
		assertThat(next).hasValueSatisfying((lease) -> assertThat(lease.fencingToken()).isGreaterThan(outer.fencingToken()));
		next.get().release();
	}

}
