package dev.distlock.testing.junit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.InMemoryLockStore;
import dev.distlock.testing.LockClock;
import dev.distlock.testing.LockScenarios;
import dev.distlock.testing.ManualLockClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import static dev.distlock.testing.LockAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** The engine, its scenarios and its clock as parameters of a test without Spring, fresh for each test. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InMemoryLocksExtensionTests {

	@Nested
	@ExtendWith(InMemoryLocksExtension.class)
	@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
	class OnTheSystemClock {

		private static InMemoryLockService first;

		private InMemoryLockStore storeOfSetUp;

		@BeforeEach
		void setUp(InMemoryLockStore store) {
			this.storeOfSetUp = store;
		}

		@Test
		@Order(1)
		void injectsOneEngineItsStoreScenariosAndClock(InMemoryLockService service, LockService asLockService,
				LockScenarios scenarios, InMemoryLockStore store, LockClock clock) {
			first = service;
			assertThat(asLockService).isSameAs(service);
			assertThat(store).isSameAs(service.store()).isSameAs(this.storeOfSetUp).isSameAs(scenarios.store());
			assertThat(clock).isEqualTo(LockClock.system());
			scenarios.holdElsewhere("k");
			assertThat(service.tryAcquire("k", Duration.ofSeconds(30), Duration.ZERO)).isEmpty();
			assertThat(scenarios).wasBusy("k");
		}

		@Test
		@Order(2)
		void eachTestHasAFreshStoreAndTheLastOnesEngineIsClosed(InMemoryLockService service, LockScenarios scenarios) {
			assertThat(service).isNotSameAs(first);
			assertThat(first.isClosed()).isTrue();
			assertThat(scenarios.history().entries()).isEmpty();
			assertThat(service.tryAcquire("k", Duration.ofSeconds(30), Duration.ZERO)).isPresent();
		}

		@Test
		@Order(3)
		void advancingNeedsTheManualClock(LockScenarios scenarios) {
			assertThatIllegalStateException().isThrownBy(() -> scenarios.advance(Duration.ofSeconds(1)))
				.withMessageContaining("InMemoryLocksExtension.withManualClock()");
		}

		@AfterAll
		static void forget() {
			first = null;
		}

	}

	@Nested
	class OnAManualClock {

		@RegisterExtension
		final InMemoryLocksExtension extension = InMemoryLocksExtension.withManualClock();

		@Test
		void timeMovesOnlyWhenTheTestAdvancesIt(InMemoryLockService service, LockScenarios scenarios,
				ManualLockClock clock) {
			assertThat(service.clock()).isSameAs(clock);
			scenarios.holdElsewhere("k", Duration.ofSeconds(5));
			scenarios.advance(Duration.ofSeconds(4));
			assertThat(service.isLocked("k")).isTrue();
			clock.advance(Duration.ofSeconds(1));
			assertThat(service.isLocked("k")).isFalse();
		}

	}

}
