package dev.distlock.redis;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LogSafe;
import dev.distlock.core.RenewalStatus;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.util.Assert;

/**
 * The operator's view of one service: its leases, its waiting threads, the lock names it has been asked for, and
 * whether renewals fail. One role: reading the engine's state for the endpoint, the health indicator and the gauges,
 * never on a lock's path to Redis (but for one set lookup per acquisition, {@link #noteName}).
 */
final class LeaseView {

	private static final Log logger = LogFactory.getLog(RedisLockService.class);

	private final LeaseRegistry registry;

	private final ReleaseSubscriber subscriber;

	/** The lock names acquired or waited for so far; bounded by the names in use, as the meters tagged by them are. */
	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	LeaseView(LeaseRegistry registry, ReleaseSubscriber subscriber) {
		this.registry = registry;
		this.subscriber = subscriber;
	}

	List<LeaseSnapshot> activeLeases() {
		long now = System.nanoTime();
		List<LeaseSnapshot> snapshots = new ArrayList<>();
		for (LeaseEntry entry : this.registry.entries()) {
			snapshots.add(entry.snapshot(now));
		}
		return snapshots;
	}

	int activeLeaseCount() {
		int held = 0;
		for (LeaseEntry entry : this.registry.entries()) {
			if (!entry.isLost()) {
				held++;
			}
		}
		return held;
	}

	int lostLeaseCount() {
		int lost = 0;
		for (LeaseEntry entry : this.registry.entries()) {
			if (entry.isLost()) {
				lost++;
			}
		}
		return lost;
	}

	LockActivity activityByName() {
		Map<String, Integer> held = new HashMap<>();
		for (LeaseEntry entry : this.registry.entries()) {
			if (!entry.isLost()) {
				held.merge(entry.name, 1, Integer::sum);
			}
		}
		return new LockActivity(held, this.subscriber.waiterCountsByName());
	}

	int waitingThreads() {
		return this.subscriber.waiterCount();
	}

	void onLockName(Consumer<String> action) {
		Assert.notNull(action, "'action' must not be null");
		this.nameActions.add(action);
		for (String name : this.names) {
			action.accept(name);
		}
	}

	/** One set lookup per acquisition: the price of per-name gauges that exist before their name's first lease. */
	void noteName(String name) {
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

	RenewalStatus renewalStatus() {
		int failing = 0;
		Instant since = null;
		String lastError = null;
		for (LeaseEntry entry : this.registry.entries()) {
			Instant entrySince = entry.renewalFailingSince();
			if (entrySince != null) {
				failing++;
				if (since == null || entrySince.isBefore(since)) {
					since = entrySince;
				}
				String error = entry.lastRenewalError();
				lastError = (error != null) ? error : lastError;
			}
		}
		return (failing == 0) ? RenewalStatus.HEALTHY : new RenewalStatus(failing, since, lastError);
	}

}
