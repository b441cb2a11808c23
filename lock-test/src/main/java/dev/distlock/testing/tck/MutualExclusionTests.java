package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** Instances exclude each other, a lease is released by whoever has it, and the helpers release what they took. */
abstract class MutualExclusionTests extends LockServiceTckSupport {


	/**
	 * Three instances, three threads each, incrementing one counter by a read, a pause and a write under the lock: no
	 * increment is lost, no two holders overlap, and every holder's fencing token is greater than the one before.
	 */
	@Test
	void instancesExcludeEachOtherOnAReadModifyWrite() {
		String key = key("counter");
		List<LockService> instances = List.of(instance(), instance(), instance());
		int threadsPerInstance = 3;
		int sections = 60;
		AtomicInteger counter = new AtomicInteger();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Long> tokens = new ArrayList<>();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> callers = new ArrayList<>();
		for (LockService instance : instances) {
			for (int t = 0; t < threadsPerInstance; t++) {
				callers.add(inBackground(() -> {
					start.await();
					for (int i = 0; i < sections; i++) {
						try (Lease lease = instance.acquire(key, LONG_TTL, LONG_WAIT)) {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							tokens.add(lease.fencingToken()); // guarded by the lock under test
							int read = counter.get();
							Thread.yield();
							counter.set(read + 1);
							inside.decrementAndGet();
						}
					}
					return null;
				}));
			}
		}
		start.countDown();
		callers.forEach((caller) -> get(caller, STRESS_DEADLINE));
		assertThat(overlaps).as("holders that overlapped").hasValue(0);
		assertThat(counter).hasValue(instances.size() * threadsPerInstance * sections);
		assertThat(tokens).as("fencing tokens in the order of the holders").isSortedAccordingTo(Long::compare)
			.doesNotHaveDuplicates();
	}

	/** Successive holders of a key, in two instances taking turns, get ever greater fencing tokens. */
	@Test
	void fencingTokensGrowStrictlyBetweenSuccessiveHolders() {
		String key = key("fenced");
		List<LockService> instances = List.of(instance(), instance());
		long previous = 0;
		for (int i = 0; i < 100; i++) {
			try (Lease lease = instances.get(i % 2).acquire(key, LONG_TTL, PATIENCE)) {
				assertThat(lease.fencingToken()).as("token of holder %d", i).isGreaterThan(previous);
				previous = lease.fencingToken();
			}
		}
	}

	/** A lease carries its owner: any thread may release it, and the key is free for everyone after. */
	@Test
	void aLeaseIsReleasedThroughItsOwnerFromAnotherThread() {
		String key = key("handed-over");
		LockService service = instance();
		LockService other = instance();
		Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
		get(inBackground(() -> {
			lease.release();
			return null;
		}));
		assertThat(lease.isHeld()).isFalse();
		Optional<Lease> next = other.tryAcquire(key, LONG_TTL, Duration.ZERO);
		assertThat(next).isPresent();
		next.get().release();
	}

	/** A released handle is not its owner's any more, whoever holds the key now; closing it again does nothing. */
	@Test
	void aReleasedLeaseStaysReleased() {
		String key = key("reused");
		LockService service = instance();
		LockService other = instance();
		Lease lease = service.acquire(key, LONG_TTL, Duration.ZERO);
		lease.release();
		Lease next = other.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(lease.isHeld()).isFalse();
		assertThatExceptionOfType(LockNotOwnedException.class).isThrownBy(lease::release)
			.withMessageContaining(key)
			.satisfies((ex) -> assertThat(ex.getOwner()).isEqualTo(lease.owner()));
		assertThatExceptionOfType(LockNotOwnedException.class).isThrownBy(lease::renew).withMessageContaining(key);
		assertThatExceptionOfType(LockNotOwnedException.class).isThrownBy(() -> lease.extend(Duration.ofSeconds(1)))
			.withMessageContaining(key);
		lease.close();
		assertThat(next.isHeld()).isTrue();
		assertThat(next.isOwned()).isTrue();
		next.release();
	}

	/**
	 * {@code execute} and {@code run} release the key after the action, also when it throws; they fail with
	 * {@link LockAcquisitionTimeoutException} naming the key and the wait when it stays held, without running the
	 * action.
	 */
	@Test
	void executeAndRunReleaseWhatTheyTook() {
		String key = key("executed");
		LockService service = instance();
		LockService other = instance();
		assertThat(service.execute(key, LONG_TTL, Duration.ZERO, () -> "done")).isEqualTo("done");
		assertThat(other.isLocked(key)).isFalse();
		assertThatIllegalStateException()
			.isThrownBy(() -> service.execute(key, LONG_TTL, Duration.ZERO, () -> {
				throw new IllegalStateException("the action failed");
			}))
			.withMessage("the action failed");
		assertThat(other.isLocked(key)).isFalse();
		AtomicInteger runs = new AtomicInteger();
		service.run(key, LONG_TTL, Duration.ZERO, runs::incrementAndGet);
		assertThat(runs).hasValue(1);

		Lease held = other.acquire(key, LONG_TTL, Duration.ZERO);
		assertThatExceptionOfType(LockAcquisitionTimeoutException.class)
			.isThrownBy(() -> service.run(key, LONG_TTL, Duration.ZERO, runs::incrementAndGet))
			.withMessageContaining(key)
			.satisfies((ex) -> assertThat(ex.getWaitTime()).isEqualTo(Duration.ZERO));
		assertThatExceptionOfType(LockAcquisitionTimeoutException.class)
			.isThrownBy(() -> service.acquire(key, LONG_TTL, Duration.ZERO))
			.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo(key));
		assertThat(runs).hasValue(1);
		held.release();
	}

	/** A blank key is refused, by acquisitions and queries alike, naming the key. */
	@Test
	void blankKeysAreRefused() {
		LockService service = instance();
		assertThatIllegalArgumentException().isThrownBy(() -> service.tryAcquire(" ", LONG_TTL, Duration.ZERO))
			.withMessageContaining("key");
		assertThatIllegalArgumentException().isThrownBy(() -> service.holder(" ")).withMessageContaining("key");
		assertThatIllegalArgumentException().isThrownBy(() -> service.isLocked("")).withMessageContaining("key");
	}

}
