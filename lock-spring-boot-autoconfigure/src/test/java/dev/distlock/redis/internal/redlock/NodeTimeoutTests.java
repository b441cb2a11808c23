package dev.distlock.redis.internal.redlock;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The Redlock node timeout (issue 31): fixed when set, otherwise three times the 99th percentile of the recent reply
 * times, within its floor and ceiling, and for one call at most a third of the lease time. Fed reply times directly:
 * nothing here depends on how fast the machine is.
 */
class NodeTimeoutTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	private final NodeTimeout adaptive = NodeTimeout.adaptive(50 * MS, 500 * MS);

	@Test
	void startsAtItsFloorAndStaysThereWhileTheNodesAnswerFast() {
		assertThat(this.adaptive.nanos()).isEqualTo(50 * MS);
		for (int i = 0; i < 1000; i++) {
			this.adaptive.record(MS / 2);
		}
		assertThat(this.adaptive.nanos()).isEqualTo(50 * MS);
		assertThat(this.adaptive.isAdaptive()).isTrue();
	}

	@Test
	void followsTheReplyTimesHighPercentileTimesThree() {
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			this.adaptive.record(((i % 100) == 99) ? 90 * MS : 40 * MS); // 1 % at 90 ms, the rest at 40 ms
		}
		// the 99th percentile of the window is 40 ms (the slowest 1 % lies above it): 3 × 40 = 120 ms
		assertThat(this.adaptive.nanos()).isEqualTo(120 * MS);
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			this.adaptive.record(((i % 10) == 9) ? 90 * MS : 40 * MS); // 10 % at 90 ms
		}
		assertThat(this.adaptive.nanos()).isEqualTo(270 * MS);
	}

	@Test
	void neverExceedsItsCeiling() {
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			this.adaptive.record(TimeUnit.SECONDS.toNanos(5));
		}
		assertThat(this.adaptive.nanos()).isEqualTo(500 * MS);
		this.adaptive.record(Long.MAX_VALUE); // no overflow
		for (int i = 0; i < 16; i++) {
			this.adaptive.record(Long.MAX_VALUE / 2);
		}
		assertThat(this.adaptive.nanos()).isEqualTo(500 * MS);
	}

	@Test
	void comesBackDownWhenTheNodesAnswerFastAgain() {
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			this.adaptive.record(400 * MS);
		}
		assertThat(this.adaptive.nanos()).isEqualTo(500 * MS);
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			this.adaptive.record(MS);
		}
		assertThat(this.adaptive.nanos()).isEqualTo(50 * MS);
	}

	@Test
	void aCallWaitsAtMostAThirdOfItsLeaseTimeButNeverLessThanTheFloor() {
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			this.adaptive.record(TimeUnit.SECONDS.toNanos(1));
		}
		assertThat(this.adaptive.forTtl(30_000)).isEqualTo(500 * MS);
		assertThat(this.adaptive.forTtl(600)).isEqualTo(200 * MS);
		assertThat(this.adaptive.forTtl(150)).isEqualTo(50 * MS);
	}

	@Test
	void anExplicitTimeoutIsFixedWhateverTheNodesAnswerIn() {
		NodeTimeout fixed = NodeTimeout.fixed(80 * MS);
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			fixed.record(TimeUnit.SECONDS.toNanos(5));
		}
		assertThat(fixed.nanos()).isEqualTo(80 * MS);
		assertThat(fixed.forTtl(150)).isEqualTo(80 * MS); // today's meaning: no cap by the lease time either
		assertThat(fixed.floorNanos()).isEqualTo(80 * MS);
		assertThat(fixed.isAdaptive()).isFalse();
		NodeTimeout small = NodeTimeout.fixed(MS);
		for (int i = 0; i < NodeTimeout.WINDOW; i++) {
			small.record(0);
		}
		assertThat(small.nanos()).isEqualTo(MS);
	}

	@Test
	void rejectsAFloorAboveTheCeiling() {
		assertThatIllegalArgumentException().isThrownBy(() -> NodeTimeout.adaptive(60 * MS, 50 * MS));
		assertThatIllegalArgumentException().isThrownBy(() -> NodeTimeout.fixed(0));
	}

}
