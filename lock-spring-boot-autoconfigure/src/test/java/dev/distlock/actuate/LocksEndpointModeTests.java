package dev.distlock.actuate;

import java.time.Duration;
import java.time.Instant;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code locks} endpoint shows each lease's mode, whatever it masks. */
class LocksEndpointModeTests {

	@Test
	void eachLeaseShowsItsMode() {
		for (LockMode mode : LockMode.values()) {
			LeaseSnapshot snapshot = new LeaseSnapshot("k", "name", "owner", "thread", Instant.now(), 1,
					Duration.ofSeconds(30), Duration.ofSeconds(29), null, 42, true, false, mode);
			assertThat(LocksEndpoint.LeaseDescriptor.of(snapshot, false, null).mode()).isEqualTo(mode);
			assertThat(LocksEndpoint.LeaseDescriptor.of(snapshot, true, null).mode()).isEqualTo(mode);
		}
	}

}
