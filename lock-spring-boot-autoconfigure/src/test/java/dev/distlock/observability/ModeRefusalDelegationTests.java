package dev.distlock.observability;

import java.util.Optional;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The services that wrap another one (the observed service, the executor adapter) tell the modes it refuses, so the
 * annotation's startup check sees through them: without it a Redlock engine behind observation would let a fair or
 * permits declaration start and fail its every call.
 */
class ModeRefusalDelegationTests {

	/** A service that refuses fair locks, whatever it is asked otherwise. */
	private static final LockService REFUSES_FAIR = new LockService() {

		@Override
		public Optional<Lease> tryAcquire(LockRequest request) {
			throw new UnsupportedOperationException("not called");
		}

		@Override
		public Optional<LockHolder> holder(String key) {
			throw new UnsupportedOperationException("not called");
		}

		@Override
		public Optional<String> modeRefusal(LockMode mode) {
			return (mode == LockMode.FAIR) ? Optional.of("no queue here") : Optional.empty();
		}

	};

	@Test
	void theObservedServiceTellsItsDelegatesRefusals() {
		LockService observed = new ObservedLockService(REFUSES_FAIR, ObservationRegistry.create());
		assertThat(observed.modeRefusal(LockMode.FAIR)).contains("no queue here");
		assertThat(observed.modeRefusal(LockMode.EXCLUSIVE)).isEmpty();
	}

	@Test
	void theExecutorAdapterTellsItsServicesRefusals() {
		AsyncLockService adapted = AsyncLockService.adapt(REFUSES_FAIR, Runnable::run);
		assertThat(adapted.modeRefusal(LockMode.FAIR)).contains("no queue here");
		assertThat(adapted.modeRefusal(LockMode.PERMITS)).isEmpty();
	}

}
