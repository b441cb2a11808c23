package dev.distlock.redis.internal.lease;

import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LogSafe;
import dev.distlock.core.RenewalStatus;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.util.Assert;

/**
 * The operator's view of one service, on either engine: its leases, its waiting threads, the lock names it has been
 * asked for, and whether renewals fail. One role: reading the engine's state for the endpoint, the health indicator
 * and the gauges, never on a lock's path to Redis (but for one set lookup per acquisition, {@link #noteName}). It
 * reads the records' volatile state without their locks for the counts, so a scrape never waits for a holder.
 */
public final class LeaseView {

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.RedisLockService");

	private final EngineRegistry<?> registry;

	private final IntSupplier waiterCount;

	private final Supplier<Map<String, Integer>> waitersByName;

	/** The lock names acquired or waited for so far; bounded by the names in use, as the meters tagged by them are. */
	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	public LeaseView(EngineRegistry<?> registry, IntSupplier waiterCount, Supplier<Map<String, Integer>> waitersByName) {
		this.registry = registry;
		this.waiterCount = waiterCount;
		this.waitersByName = waitersByName;
	}

	/** The leases listed, oldest first (by when they were acquired). */
	public List<LeaseSnapshot> activeLeases() {
		long now = System.nanoTime();
		return this.registry.entries().stream().map(entry -> entry.snapshot(now))
			.sorted(Comparator.comparing(LeaseSnapshot::heldSince)).toList();
	}

	public int activeLeaseCount() {
		return (int) this.registry.entries().stream().filter(entry -> entry.state == LeaseRecord.State.HELD).count();
	}

	public int lostLeaseCount() {
		return (int) this.registry.entries().stream().filter(LeaseRecord::isLost).count();
	}

	public LockActivity activityByName() {
		Map<String, Integer> held = new HashMap<>();
		for (LeaseRecord entry : this.registry.entries()) {
			if (entry.state == LeaseRecord.State.HELD) {
				held.merge(entry.name, 1, Integer::sum);
			}
		}
		return new LockActivity(held, this.waitersByName.get());
	}

	public int waitingThreads() {
		return this.waiterCount.getAsInt();
	}

	public void onLockName(Consumer<String> action) {
		Assert.notNull(action, "'action' must not be null");
		this.nameActions.add(action);
		for (String name : this.names) {
			action.accept(name);
		}
	}

	/** One set lookup per acquisition: the price of per-name gauges that exist before their name's first lease. */
	public void noteName(String name) {
		if (!this.names.contains(name) && this.names.add(name)) {
			for (Consumer<String> action : this.nameActions) {
				try {
					action.accept(name);
				}
				catch (RuntimeException ex) {
					logger.warn("Lock name action failed for '" + LogSafe.escape(name) + "'", ex);
				}
			}
		}
	}

	/** How many held leases fail to renew, since when the first of them fails, and that lease's last error. */
	public RenewalStatus renewalStatus() {
		int failing = 0;
		Instant since = null;
		String error = null;
		for (LeaseRecord entry : this.registry.entries()) {
			Instant entrySince = entry.renewalFailingSince();
			if (entrySince != null) {
				failing++;
				if (since == null || entrySince.isBefore(since)) {
					since = entrySince;
					error = entry.lastRenewalError();
				}
			}
		}
		return (failing == 0) ? RenewalStatus.HEALTHY : new RenewalStatus(failing, since, error);
	}

}
