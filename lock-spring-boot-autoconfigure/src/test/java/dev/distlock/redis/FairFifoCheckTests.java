package dev.distlock.redis;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The FIFO rule of {@link FairFifoCheck} on hand-made histories: it finds an acquisition that overtook one seen
 * waiting, and lets concurrent arrivals enter in either order.
 */
class FairFifoCheckTests {

	private static final Map<String, String> CLIENTS = Map.of("a", "clientA", "b", "clientB");

	@Test
	void anAcquisitionThatOvertakesOneSeenWaitingIsAViolation() {
		// a takes ticket 1 and is seen queued at tick 2; b takes ticket 3 and enters first
		FairFifoCheck check = new FairFifoCheck(List.of("b 3 1 10", "a 1 2 11"), CLIENTS);
		check.observe(new FairQueueProbe.Snapshot(2, List.of("clientA:7:1")));
		FairFifoCheck.Result result = check.check();
		assertThat(result.orderedPairs()).isEqualTo(1);
		assertThat(result.violations()).singleElement().asString().contains("process a's acquisition (ticket 1, order 2)");
	}

	@Test
	void waitersSeenQueuedThatEnterInTicketOrderPass() {
		FairFifoCheck check = new FairFifoCheck(List.of("a 1 1 10", "b 3 2 11"), CLIENTS);
		check.observe(new FairQueueProbe.Snapshot(2, List.of("clientA:7:1")));
		assertThat(check.check().violations()).isEmpty();
		assertThat(check.seenWaiting()).isOne();
	}

	@Test
	void concurrentArrivalsMayEnterInEitherOrder() {
		// both took their tickets before either was seen queued (tick 3): no order between them
		FairFifoCheck check = new FairFifoCheck(List.of("b 2 1 10", "a 1 2 11"), CLIENTS);
		check.observe(new FairQueueProbe.Snapshot(3, List.of("clientB:7:1", "clientA:7:1")));
		FairFifoCheck.Result result = check.check();
		assertThat(result.orderedPairs()).isZero();
		assertThat(result.violations()).isEmpty();
	}

	@Test
	void aQueueEntryBelongsToTheProcesssLatestAcquisitionBeforeTheSnapshot() {
		// a's first acquisition (ticket 1) ended; the entry seen at tick 5 is its second (ticket 4), which b (ticket 6)
		// must not overtake
		FairFifoCheck check = new FairFifoCheck(List.of("a 1 1 10", "a 4 3 12", "b 6 2 11"), CLIENTS);
		check.observe(new FairQueueProbe.Snapshot(5, List.of("clientA:7:2")));
		assertThat(check.check().violations()).singleElement().asString().contains("ticket 4");
	}

}
