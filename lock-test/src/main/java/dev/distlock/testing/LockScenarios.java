package dev.distlock.testing;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import dev.distlock.core.LockSettings;

import org.springframework.util.Assert;

/**
 * One-line scenarios for a test of code that uses the locks, on the in-memory engine: what the rest of the world does
 * to the application (another instance holds a key, Redis loses a lease or stops answering, time passes), and what
 * happened to the locks. Keys are the application's lock keys, as {@code @DistributedLock} evaluates them
 * ({@code "inventory:sku-42"}), not the Redis keys with their prefix.
 * <p>
 * A test gets one from {@code @AutoConfigureInMemoryLocks} (a bean) or {@code InMemoryLocksExtension} (a parameter),
 * or makes one over a store: {@link #of(InMemoryLockStore)}. Assert on it with {@link LockAssertions#assertThat}.
 *
 * <pre class="code">
 * locks.holdElsewhere("inventory:sku-42", Duration.ofSeconds(5));   // the purchase answers lock-busy meanwhile
 * locks.loseNow("inventory:sku-42");                                // the lease is lost: LockLostException at the end
 * locks.unreachableForNextCalls(2);                                 // Redis does not answer the next 2 calls
 * locks.advance(Duration.ofSeconds(30));                            // with a manual clock only
 * LockAssertions.assertThat(locks).acquired("inventory:sku-42").times(1).releasedEverything();
 * </pre>
 * <p>
 * Thread-safe: each method is one step of the store. Scenarios for a real Redis are in {@code RedisLockScenarios}.
 *
 * @since 0.1.0
 */
public final class LockScenarios {

	private final InMemoryLockStore store;

	private LockScenarios(InMemoryLockStore store) {
		this.store = store;
	}

	/**
	 * The scenarios of the instances on {@code store}.
	 * @param store the store the application's in-memory engine uses
	 * @return the scenarios
	 */
	public static LockScenarios of(InMemoryLockStore store) {
		Assert.notNull(store, "'store' must not be null");
		return new LockScenarios(store);
	}

	/**
	 * The scenarios of {@code service}'s store (and of every other instance on it).
	 * @param service the application's in-memory engine
	 * @return the scenarios
	 */
	public static LockScenarios of(InMemoryLockService service) {
		Assert.notNull(service, "'service' must not be null");
		return new LockScenarios(service.store());
	}

	// ---- what the rest of the world does

	/**
	 * Another instance holds {@code key} for {@code time}: the application cannot have the key (a
	 * {@code @DistributedLock} call waits, then fails with {@code LockAcquisitionTimeoutException}) until {@code time}
	 * passes on the store's clock or the hold is {@linkplain ForeignHold#release() released}.
	 * @param key the application's lock key
	 * @param time how long the other instance holds it at most
	 * @return the hold, to release it early
	 * @throws IllegalStateException if the key is held now
	 */
	public ForeignHold holdElsewhere(String key, Duration time) {
		return this.store.holdElsewhere(key, time);
	}

	/**
	 * Another instance holds {@code key} until the hold is {@linkplain ForeignHold#release() released} (or
	 * {@link #reset()}), however far the clock moves.
	 * @param key the application's lock key
	 * @return the hold, to release it
	 * @throws IllegalStateException if the key is held now
	 */
	public ForeignHold holdElsewhere(String key) {
		return this.store.holdElsewhere(key);
	}

	/**
	 * Every lease on {@code key} is lost now, and its holders are told at once, as a watchdog renewal that found it gone
	 * tells them: the {@code LockLostEvent}, the lease's {@code onLost} actions, and a {@code LockLostException} at its
	 * release (so a {@code @DistributedLock} call running on it ends with one). The key is free for others at once.
	 * @param key the application's lock key
	 * @return how many holders lost it (0 when nobody held it)
	 */
	public int loseNow(String key) {
		return this.store.lose(key);
	}

	/**
	 * Every lease on {@code key} is deleted without telling anyone, as a Redis failover can lose it: the key is free for
	 * others at once, and each holder finds out at its next watchdog renewal or its next call on the lease (its release
	 * at the latest).
	 * @param key the application's lock key
	 * @return how many holders lost it (0 when nobody held it)
	 */
	public int loseAtNextRenewal(String key) {
		return this.store.loseAtNextRenewal(key);
	}

	/**
	 * Redis does not answer the application's next {@code calls} calls (acquisitions, releases, extensions, queries):
	 * each fails with {@code LockUnavailableException}; an acquisition that may wait retries within its wait.
	 * Renewals are not counted.
	 * @param calls how many calls fail; 0 ends it
	 */
	public void unreachableForNextCalls(int calls) {
		this.store.failNextCalls(calls);
	}

	/**
	 * Redis does not answer at all until {@link #reachable()}: every call fails with {@code LockUnavailableException},
	 * renewals fail (the {@code locks} health indicator shows it), and a renewed lease whose time runs out meanwhile is
	 * lost.
	 */
	public void unreachable() {
		this.store.makeUnreachable();
	}

	/** Redis answers again: held leases are renewed and waiters get the keys freed meanwhile. */
	public void reachable() {
		this.store.makeReachable();
	}

	/**
	 * Move the store's manual clock forward: lease times run out, waits end and renewals run, in the order of their
	 * times, before this returns.
	 * @param time how far
	 * @throws IllegalStateException if the store runs on the system clock, where time passes by itself
	 */
	public void advance(Duration time) {
		if (!(this.store.clock() instanceof ManualLockClock manual)) {
			throw new IllegalStateException("LockScenarios.advance(Duration) needs a manual clock, but the store runs on "
					+ this.store.clock() + ": use @AutoConfigureInMemoryLocks(manualClock = true), "
					+ "InMemoryLocksExtension.withManualClock() or an InMemoryLockStore on LockClock.manual()");
		}
		manual.advance(time);
	}

	/** {@return the store's clock: a {@link ManualLockClock} when time passes only by {@link #advance}} */
	public LockClock clock() {
		return this.store.clock();
	}

	/** {@return the store these scenarios act on} */
	public InMemoryLockStore store() {
		return this.store;
	}

	// ---- what happened

	/** {@return everything that happened to the locks, in order} */
	public LockHistory history() {
		return this.store.history();
	}

	/** {@return the keys that were locked (a new lease acquired), in the order of their first acquisition} */
	public List<String> lockedKeys() {
		Set<String> keys = new LinkedHashSet<>();
		history().entries(LockHistory.Kind.ACQUIRED).forEach((entry) -> keys.add(entry.key()));
		return List.copyOf(keys);
	}

	/**
	 * {@return how often {@code key} was locked: new leases acquired, re-entries not counted}
	 * @param key the application's lock key
	 */
	public int timesLocked(String key) {
		return (int) entriesOf(key, LockHistory.Kind.ACQUIRED).count();
	}

	/**
	 * {@return the longest time an acquisition of {@code key} waited, whether it got the key, ended without it or
	 * failed; zero when none waited}
	 * @param key the application's lock key
	 */
	public Duration longestWait(String key) {
		return entriesOf(key, LockHistory.Kind.ACQUIRED, LockHistory.Kind.REENTERED, LockHistory.Kind.NOT_ACQUIRED,
				LockHistory.Kind.FAILED)
			.map(LockHistory.Entry::duration)
			.max(Duration::compareTo)
			.orElse(Duration.ZERO);
	}

	/** {@return the acquisitions that failed because Redis did not answer, in order, with why in their detail} */
	public List<LockHistory.Entry> failures() {
		return history().entries(LockHistory.Kind.FAILED);
	}

	/**
	 * Start afresh, as each Spring test method does on its own ({@code @AutoConfigureInMemoryLocks}): release the
	 * holds of other instances, end an outage and the calls told to fail, and forget the history. Leases the
	 * application holds stay held: they are the application's.
	 */
	public void reset() {
		this.store.resetScenarios();
	}

	private Stream<LockHistory.Entry> entriesOf(String key, LockHistory.Kind... kinds) {
		LockSettings.checkKey(key, "'key'");
		List<LockHistory.Kind> wanted = List.of(kinds);
		return history().entries(key).stream().filter((entry) -> wanted.contains(entry.kind()));
	}

	@Override
	public String toString() {
		return "LockScenarios[" + this.store + "]";
	}

}
