package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockSettings;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The store that {@link InMemoryLockService} instances share, as application instances share a Redis: its keys, their
 * holders and waiters, and the clock it measures time on. Several services on one store behave like several
 * application instances on one Redis; each service on a store of its own is a world of its own.
 * <p>
 * It also takes a test's orders, the things a test cannot otherwise make happen on demand: a key held by another
 * instance ({@link #holdElsewhere(String, Duration)}), a lease lost now ({@link #lose(String)}) or at its next renewal
 * ({@link #loseAtNextRenewal(String)}), a store that does not answer ({@link #makeUnreachable()},
 * {@link #failNextCalls(int)}); and it keeps a {@link #history()} of what happened to its locks.
 * <p>
 * Thread-safe. One monitor guards the whole store and its instances' leases (simplicity over throughput); no
 * listener, future stage or event of a caller ever runs under it. Invariants are stated where the state lives:
 * {@code LockTable}, {@code KeyState}, {@code StoreHold}, {@code Waiter} and {@code LeaseEntry}. Time-driven changes
 * (expiries, the ends of waits, renewals) happen when the store catches up with its clock: at every call, at every
 * {@link ManualLockClock#advance(Duration) advance} of a manual clock, and, on the system clock, on a timer thread when
 * the next one is due.
 *
 * @since 0.1.0
 */
public final class InMemoryLockStore {

	/** Guards everything in this store and the leases of its instances; blocked threads wait on it. */
	final Object lock = new Object();

	final LockTable table = new LockTable(this);

	final Outage outage = new Outage();

	final LockHistory history = new LockHistory();

	/** Where lost-lease actions and application events run: one at a time, in order, off the caller's thread. */
	final Executor events = CallbackThreads.serial();

	private final LockClock clock;

	/** The open instances, whose watchdogs renew their leases when the store catches up. */
	private final List<Instance> instances = new ArrayList<>();

	private final List<ForeignHold> foreignHolds = new ArrayList<>();

	private long foreignSequence;

	/** When the timer's catch-up is due, for a store on the system clock; null when none is scheduled. */
	private @Nullable Instant timerDue;

	private @Nullable ScheduledFuture<?> timer;

	/** A store on the {@linkplain LockClock#system() system clock}. */
	public InMemoryLockStore() {
		this(LockClock.system());
	}

	/**
	 * A store on {@code clock}; on a {@link ManualLockClock}, its expiries, waits and renewals happen when the test
	 * advances the clock.
	 * @param clock the clock that lease times, expiries and wait deadlines are measured on
	 */
	public InMemoryLockStore(LockClock clock) {
		Assert.notNull(clock, "'clock' must not be null");
		this.clock = clock;
		if (clock instanceof ManualLockClock manual) {
			manual.onAdvance(() -> call((effects) -> null));
		}
	}

	/** {@return the clock this store measures time on} */
	public LockClock clock() {
		return this.clock;
	}

	/** {@return what happened to the locks of this store so far} */
	public LockHistory history() {
		return this.history;
	}

	/**
	 * Make another instance (one the test does not run) hold {@code key} with a fixed lease of {@code ttl}: the
	 * application's instances cannot have the key until the test releases it or {@code ttl} passes on the clock, after
	 * which it expires as a dead instance's lease does.
	 * @param key the lock key
	 * @param ttl how long it holds the key at most
	 * @return the hold, to release it early or read its fencing token
	 * @throws IllegalStateException if the key is held now
	 */
	public ForeignHold holdElsewhere(String key, Duration ttl) {
		LockSettings.checkTtl(ttl, "'ttl' of lock '" + key + "'");
		return holdElsewhere(key, ttl, false);
	}

	/**
	 * Make another instance hold {@code key} until the test {@linkplain ForeignHold#release() releases} it: a live
	 * instance whose watchdog renews its 30 s lease.
	 * @param key the lock key
	 * @return the hold, to release it or read its fencing token
	 * @throws IllegalStateException if the key is held now
	 */
	public ForeignHold holdElsewhere(String key) {
		return holdElsewhere(key, Duration.ofSeconds(30), true);
	}

	private ForeignHold holdElsewhere(String key, Duration ttl, boolean renewed) {
		LockSettings.checkKey(key, "'key'");
		return call((effects) -> {
			Instant now = this.clock.now();
			KeyState keyState = this.table.keyState(key);
			if (!keyState.holds.isEmpty()) {
				this.table.forgetIfIdle(keyState);
				throw new IllegalStateException("Lock '" + key + "' is held (by " + keyState.holds.get(0).owner
						+ "): release it before another instance can hold it");
			}
			StoreHold hold = this.table.hold(keyState, ForeignHold.INSTANCE + ":" + (++this.foreignSequence),
					ForeignHold.INSTANCE, LockMode.EXCLUSIVE, 1, ttl, now);
			ForeignHold foreign = new ForeignHold(this, hold, renewed, ttl);
			this.foreignHolds.add(foreign);
			this.history.record(now, key, LockHistory.Kind.HELD_ELSEWHERE, ForeignHold.INSTANCE, hold.owner,
					LockMode.EXCLUSIVE, hold.token, Duration.ZERO, renewed ? "renewed until released" : "lease " + ttl);
			return foreign;
		});
	}

	boolean releaseForeign(StoreHold hold) {
		return call((effects) -> releaseForeign(hold, effects));
	}

	/** Release a foreign hold unless it is gone already (the monitor is held). */
	boolean releaseForeign(StoreHold hold, Effects effects) {
		if (hold.gone) {
			return false;
		}
		Instant now = this.clock.now();
		this.table.drop(hold);
		this.history.record(now, hold.key, LockHistory.Kind.RELEASED, ForeignHold.INSTANCE, hold.owner, hold.mode,
				hold.token, Duration.between(hold.since, now), null);
		handOn(hold.key, now, effects);
		return true;
	}

	/**
	 * Make every lease on {@code key} lost now: the store drops it (the key goes to its waiters) and each holder
	 * instance hears of it at once, as a watchdog renewal that found the lease gone tells it
	 * ({@code RENEWAL_FOUND_GONE}): the {@code LockLostEvent}, the listeners, the leases' {@code onLost} actions, and
	 * a {@code LockLostException} at release. A foreign hold on it ends too.
	 * @param key the lock key
	 * @return how many holders lost it
	 */
	public int lose(String key) {
		return drop(key, true);
	}

	/**
	 * Delete every lease on {@code key} from the store without telling anyone, as if Redis had lost it (a failover, an
	 * eviction): the key goes to its waiters at once, and each holder finds out at its next watchdog renewal (an
	 * auto-renewed lease) or its next call on the lease (a release, an extension, an ownership check).
	 * @param key the lock key
	 * @return how many holders lost it
	 */
	public int loseAtNextRenewal(String key) {
		return drop(key, false);
	}

	private int drop(String key, boolean tellNow) {
		LockSettings.checkKey(key, "'key'");
		return call((effects) -> {
			KeyState keyState = this.table.existing(key);
			if (keyState == null) {
				return 0;
			}
			Instant now = this.clock.now();
			List<StoreHold> holds = List.copyOf(keyState.holds);
			for (StoreHold hold : holds) {
				this.table.drop(hold);
				LeaseEntry renewer = hold.renewer;
				if (tellNow && renewer != null) {
					renewer.instance.lostNow(renewer, now, effects);
				}
			}
			handOn(key, now, effects);
			return holds.size();
		});
	}

	/**
	 * Make the next {@code calls} calls of the application's instances fail as calls to a Redis that does not answer
	 * fail: {@code LockUnavailableException}. A call is an acquisition attempt (a re-entry too), a release, an
	 * extension or renewal by a holder, an ownership check, a holder query or a forced release; the watchdog's renewals
	 * are not counted. As with the Redis engine, an acquisition that may wait retries a failed attempt within its wait
	 * (here at once), so it fails only when every attempt did.
	 * @param calls how many calls fail, from now; 0 ends it
	 */
	public void failNextCalls(int calls) {
		Assert.isTrue(calls >= 0, () -> "'calls' must not be negative, but was " + calls);
		call((effects) -> {
			this.outage.failNext(calls);
			return null;
		});
	}

	/**
	 * Make the store unreachable until {@link #makeReachable()}: every call fails with
	 * {@code LockUnavailableException}, the watchdog's renewals fail (the {@code renewalStatus()} of each instance
	 * reports its held leases as failing, so the health indicator shows it), and a renewed lease whose time runs out
	 * meanwhile is lost ({@code RENEWAL_FAILED}) as the store drops it. Waiting acquisitions get nothing meanwhile and
	 * fail with {@code LockUnavailableException} when their wait ends.
	 */
	public void makeUnreachable() {
		call((effects) -> {
			this.outage.unreachable(true);
			return null;
		});
	}

	/**
	 * Make the store answer again: the watchdogs renew their leases at once, and waiters get the keys that were freed
	 * meanwhile. Calls counted by {@link #failNextCalls(int)} still fail.
	 */
	public void makeReachable() {
		call((effects) -> {
			reachableAgain(effects);
			return null;
		});
	}

	private void reachableAgain(Effects effects) {
		Instant now = this.clock.now();
		this.outage.unreachable(false);
		effects.wakeWaiters(); // a blocked re-entry waits for the store to answer again
		this.instances.forEach((instance) -> instance.renewNow(now, effects));
		List.copyOf(this.table.keys()).forEach((keyState) -> {
			this.table.grantWaiting(keyState, now, effects);
			this.table.forgetIfIdle(keyState);
		});
	}

	/**
	 * Undo the test's orders ({@link LockScenarios#reset()}): the foreign holds end, the store answers every call, and
	 * the history starts afresh. The application's own leases are left as they are.
	 */
	void resetScenarios() {
		call((effects) -> {
			this.foreignHolds.forEach((foreign) -> foreign.end(effects));
			this.foreignHolds.clear();
			this.outage.failNext(0);
			if (!this.outage.isReachable()) {
				reachableAgain(effects);
			}
			this.history.clear();
			return null;
		});
	}

	/** {@return whether the store answers: not made unreachable (calls counted by {@link #failNextCalls} aside)} */
	public boolean isReachable() {
		return call((effects) -> this.outage.isReachable());
	}

	@Override
	public String toString() {
		return "InMemoryLockStore[clock=" + this.clock + "]";
	}

	// ---- for the engine (package-private)

	/**
	 * Run {@code body} under the monitor, after catching up with the clock; then wake blocked threads if a wait
	 * ended, plan the timer, leave the monitor and run the effects, also when the body throws.
	 */
	<T> T call(Function<Effects, T> body) {
		Effects effects = new Effects();
		try {
			synchronized (this.lock) {
				try {
					catchUp(effects);
					return body.apply(effects);
				}
				finally {
					if (effects.takeWake()) {
						this.lock.notifyAll();
					}
					scheduleTimer();
				}
			}
		}
		finally {
			effects.run();
		}
	}

	/** Let what is due on the clock happen, in the order of the times that passed ({@code LockTable.catchUp}). */
	void catchUp(Effects effects) {
		this.table.catchUp(this.clock.now(), effects);
	}

	/** The renewals due by {@code now}: of the instances' watchdogs, and of the foreign holders renewed until released. */
	void renewDue(Instant now, Effects effects) {
		this.instances.forEach((instance) -> instance.renewDue(now, effects));
		this.foreignHolds.removeIf((foreign) -> !foreign.renew(now));
	}

	/** Hand a key that changed to its waiters, and forget it when nobody holds or waits for it. */
	void handOn(String key, Instant now, Effects effects) {
		KeyState keyState = this.table.existing(key);
		if (keyState != null) {
			this.table.grantWaiting(keyState, now, effects);
			this.table.forgetIfIdle(keyState);
		}
	}

	void register(Instance instance) {
		synchronized (this.lock) {
			for (Instance open : this.instances) {
				Assert.isTrue(!open.clientId.equals(instance.clientId),
						() -> "Another instance on this store has the client id '" + instance.clientId + "'");
			}
			this.instances.add(instance);
		}
	}

	void unregister(Instance instance) {
		synchronized (this.lock) {
			this.instances.remove(instance);
		}
	}

	/**
	 * Block the calling thread, which holds the monitor, until it is woken or, on the system clock, until
	 * {@code deadline}; on a manual clock only a wake-up (a hand-over, an advance, an outage's end) ends it.
	 */
	void await(Instant deadline) throws InterruptedException {
		if (this.clock instanceof SystemLockClock system) {
			long nanos = Instants.saturatedNanos(system.until(deadline));
			if (nanos > 0) {
				TimeUnit.NANOSECONDS.timedWait(this.lock, nanos);
			}
		}
		else {
			this.lock.wait();
		}
	}

	/** On the system clock, make the timer catch up when the next expiry, deadline or renewal is due. */
	private void scheduleTimer() {
		if (!(this.clock instanceof SystemLockClock system)) {
			return;
		}
		Instant next = this.table.nextDue();
		for (Instance instance : this.instances) {
			next = Instants.earlier(next, instance.nextRenewal());
		}
		if (next == null || (this.timerDue != null && !next.isBefore(this.timerDue))) {
			return;
		}
		if (this.timer != null) {
			this.timer.cancel(false);
		}
		this.timerDue = next;
		long delay = Instants.saturatedNanos(system.until(next));
		this.timer = CallbackThreads.TIMER.schedule(() -> CallbackThreads.runLogged(this::onTimer, "a timed catch-up"),
				delay, TimeUnit.NANOSECONDS);
	}

	private void onTimer() {
		synchronized (this.lock) {
			this.timerDue = null;
			this.timer = null;
		}
		call((effects) -> null);
	}

}
