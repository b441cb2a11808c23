package dev.distlock.testing;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.testing.LockHistory.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/** The test's orders to the store: a key held elsewhere, a lease lost, a store that does not answer; its history. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InMemoryLockStoreTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private final ManualLockClock clock = LockClock.manual();

	private final InMemoryLockStore store = new InMemoryLockStore(this.clock);

	private final List<LockLostEvent> losses = new CopyOnWriteArrayList<>();

	private final List<Object> published = new CopyOnWriteArrayList<>();

	private final List<String> renewals = new CopyOnWriteArrayList<>();

	private final InMemoryLockService service = InMemoryLockService.builder(this.store)
		.clientId("app-1")
		.eventPublisher(this.published::add)
		.listener(new LockListener() {

			@Override
			public void lost(LockLostEvent event) {
				InMemoryLockStoreTests.this.losses.add(event);
			}

			@Override
			public void renewed(String name, boolean success) {
				InMemoryLockStoreTests.this.renewals.add(name + ":" + success);
			}

		})
		.build();

	@Test
	void aKeyHeldElsewhereForATimeIsFreeWhenItsTimeRunsOut() {
		ForeignHold elsewhere = this.store.holdElsewhere("k", Duration.ofSeconds(5));
		assertThat(elsewhere.owner()).startsWith("elsewhere:");
		assertThat(this.service.tryAcquire("k", TTL, Duration.ZERO)).isEmpty();
		assertThat(this.service.holder("k")).hasValueSatisfying((holder) -> {
			assertThat(holder.fencingToken()).isEqualTo(elsewhere.fencingToken());
			assertThat(holder.remainingTtl()).isEqualTo(Duration.ofSeconds(5));
		});
		CompletableFuture<Optional<Lease>> waiting = this.service.tryAcquireAsync(LockRequest.of("k", TTL, TTL),
				LockOwner.newOwner());
		this.clock.advance(Duration.ofSeconds(5));
		Lease lease = waiting.join().orElseThrow();
		assertThat(lease.fencingToken()).isGreaterThan(elsewhere.fencingToken());
		assertThat(elsewhere.isHeld()).isFalse();
		assertThat(elsewhere.release()).isFalse();
		assertThat(this.store.history().entries("k")).extracting(LockHistory.Entry::kind)
			.containsExactly(Kind.HELD_ELSEWHERE, Kind.NOT_ACQUIRED, Kind.WAITING, Kind.EXPIRED, Kind.ACQUIRED);
		lease.release();
	}

	@Test
	void aKeyHeldElsewhereUntilReleasedOutlivesAnyAdvance() {
		ForeignHold elsewhere = this.store.holdElsewhere("k");
		this.clock.advance(Duration.ofDays(2));
		assertThat(elsewhere.isHeld()).isTrue();
		assertThat(this.service.isLocked("k")).isTrue();
		assertThatIllegalStateException().isThrownBy(() -> this.store.holdElsewhere("k")).withMessageContaining("'k'");
		assertThat(elsewhere.release()).isTrue();
		assertThat(this.service.tryAcquire("k", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
	}

	@Test
	void aLeaseLostNowIsToldAtOnceAndItsKeyGoesToItsWaiter() throws Exception {
		Lease lease = this.service.acquire("k", TTL, Duration.ZERO);
		List<LockLostEvent> actions = new CopyOnWriteArrayList<>();
		lease.onLost(actions::add);
		InMemoryLockService other = InMemoryLockService.builder(this.store).build();
		CompletableFuture<Optional<Lease>> waiting = other.tryAcquireAsync(LockRequest.of("k", TTL, TTL),
				LockOwner.newOwner());
		assertThat(this.store.lose("k")).isEqualTo(1);
		assertThat(lease.isLost()).isTrue();
		assertThat(this.losses).singleElement()
			.satisfies((event) -> assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE));
		await().atMost(Duration.ofSeconds(10)).until(() -> actions.size() == 1 && this.published.size() == 1);
		assertThat(waiting.get(10, TimeUnit.SECONDS)).isPresent();
		assertThat(this.service.lostLeaseCount()).isEqualTo(1);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(this.service.lostLeaseCount()).isZero();
		assertThat(this.store.history().entries(Kind.LOST)).singleElement()
			.satisfies((entry) -> assertThat(entry.detail()).isEqualTo("RENEWAL_FOUND_GONE"));
	}

	@Test
	void aLeaseLostAtItsNextRenewalIsFoundThenOrByItsHolder() {
		Lease renewed = this.service.acquire("renewed", TTL, Duration.ZERO);
		Lease fixed = this.service.acquire(LockRequest.of("fixed", TTL, Duration.ZERO).withFixedLease());
		assertThat(this.store.loseAtNextRenewal("renewed")).isEqualTo(1);
		assertThat(this.store.loseAtNextRenewal("fixed")).isEqualTo(1);
		assertThat(this.service.isLocked("renewed")).isFalse();
		assertThat(renewed.isLost()).isFalse();
		this.clock.advance(TTL.dividedBy(3));
		assertThat(renewed.isLost()).isTrue();
		assertThat(this.losses).singleElement()
			.satisfies((event) -> assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE));
		assertThat(fixed.isLost()).as("no watchdog renews a fixed lease").isFalse();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(fixed::release)
			.satisfies((ex) -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.FOUND_GONE_BY_HOLDER));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(renewed::release);
	}

	@Test
	void theNextCallsFailAsIfRedisDidNotAnswer() {
		this.store.failNextCalls(2);
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> this.service.tryAcquire("k", TTL, Duration.ZERO))
			.withMessageStartingWith("Could not acquire lock 'k': the store did not answer");
		// a wait retries within its wait: the second failing call, then an answer
		Lease lease = this.service.acquire("k", TTL, Duration.ofSeconds(1));
		this.store.failNextCalls(1);
		assertThatExceptionOfType(LockUnavailableException.class).isThrownBy(lease::release)
			.withMessageContaining("the lease expires within 30000ms");
		assertThat(lease.isHeld()).isFalse();
		assertThat(this.service.activeLeases()).isEmpty();
		// nobody renews it now: the store keeps it for its lease time
		assertThat(this.service.isLocked("k")).isTrue();
		this.clock.advance(TTL);
		assertThat(this.service.isLocked("k")).isFalse();
		// the attempt retried within its wait is no failed acquisition; the unanswered release is told as such
		assertThat(this.store.history().entries(Kind.FAILED)).hasSize(1);
		assertThat(this.store.history().entries(Kind.RELEASED)).singleElement()
			.satisfies((entry) -> assertThat(entry.detail()).isEqualTo("not answered"));
	}

	@Test
	void anUnreachableStoreFailsRenewalsUntilTheLeaseIsLost() throws Exception {
		Lease lease = this.service.acquire("k", TTL, Duration.ZERO);
		InMemoryLockService other = InMemoryLockService.builder(this.store).build();
		this.store.makeUnreachable();
		assertThat(this.store.isReachable()).isFalse();
		CompletableFuture<Optional<Lease>> waiting = other.tryAcquireAsync(LockRequest.of("k", TTL, Duration.ofMinutes(1)),
				LockOwner.newOwner());
		this.clock.advance(TTL.dividedBy(3));
		assertThat(this.service.renewalStatus().isFailing()).isTrue();
		assertThat(this.service.renewalStatus().failingLeases()).isEqualTo(1);
		assertThat(this.renewals).contains("default:false");
		assertThat(lease.isLost()).isFalse();
		this.clock.advance(TTL);
		assertThat(lease.isLost()).isTrue();
		assertThat(this.losses).singleElement()
			.satisfies((event) -> assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FAILED));
		assertThat(this.service.renewalStatus().isFailing()).as("a lost lease is reported as such").isFalse();
		this.clock.advance(Duration.ofMinutes(1));
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(LockUnavailableException.class)
			.withMessageContaining("within PT1M");
		assertThatExceptionOfType(LockUnavailableException.class).isThrownBy(() -> other.holder("k"));
		this.store.makeReachable();
		assertThat(other.tryAcquire("k", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
	}

	@Test
	void aBlockedReentryThatGotNoAnswerRetriesWhenTheStoreAnswersAgain() throws Exception {
		CompletableFuture<Lease[]> leases = CompletableFuture.supplyAsync(() -> {
			Lease outer = this.service.acquire("k", TTL, Duration.ZERO);
			this.store.makeUnreachable();
			return new Lease[] { outer, this.service.acquire("k", TTL, Duration.ofMinutes(1)) };
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.store.isReachable());
		await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !leases.isDone());
		this.store.makeReachable();
		Lease[] held = leases.get(10, TimeUnit.SECONDS);
		assertThat(held[1].fencingToken()).isEqualTo(held[0].fencingToken());
		assertThat(this.service.holder("k")).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(2));
	}

	@Test
	void aStoreReachableAgainRenewsAndHandsOverWhatWasFreed() throws Exception {
		Lease held = this.service.acquire("held", TTL, Duration.ZERO);
		Lease fixed = this.service.acquire(LockRequest.of("fixed", Duration.ofSeconds(5), Duration.ZERO).withFixedLease());
		InMemoryLockService other = InMemoryLockService.builder(this.store).build();
		CompletableFuture<Optional<Lease>> waiting = other.tryAcquireAsync(LockRequest.of("fixed", TTL, TTL),
				LockOwner.newOwner());
		this.store.makeUnreachable();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(waiting).isNotDone();
		assertThat(this.service.renewalStatus().isFailing()).isTrue();
		this.store.makeReachable();
		assertThat(this.service.renewalStatus().isFailing()).isFalse();
		assertThat(held.isOwned()).isTrue();
		assertThat(waiting.get(10, TimeUnit.SECONDS)).isPresent();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(fixed::release)
			.satisfies((ex) -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.EXPIRED));
		held.release();
	}

	@Test
	void theHistoryTellsWhatHappenedInOrder() {
		Lease lease = this.service.acquire("k", TTL, Duration.ZERO);
		Lease again = this.service.acquire("k", TTL, Duration.ZERO);
		this.clock.advance(Duration.ofSeconds(3));
		again.release();
		lease.release();
		assertThat(this.store.history().entries("k")).satisfiesExactly(
				(entry) -> {
					assertThat(entry.kind()).isEqualTo(Kind.ACQUIRED);
					assertThat(entry.instance()).isEqualTo("app-1");
					assertThat(entry.owner()).startsWith("app-1:");
					assertThat(entry.fencingToken()).isEqualTo(lease.fencingToken());
				},
				(entry) -> assertThat(entry.kind()).isEqualTo(Kind.REENTERED),
				(entry) -> assertThat(entry.duration()).isEqualTo(Duration.ofSeconds(3)),
				(entry) -> {
					assertThat(entry.kind()).isEqualTo(Kind.RELEASED);
					assertThat(entry.detail()).isNull();
				});
		this.store.history().clear();
		assertThat(this.store.history().entries()).isEmpty();
	}

}
