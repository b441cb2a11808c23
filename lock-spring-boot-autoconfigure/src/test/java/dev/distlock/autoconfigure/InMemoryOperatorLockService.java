package dev.distlock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.RenewalStatus;

/**
 * The in-memory engine with an operator view, as an application's own engine (or a future one) would offer it: what
 * the tests of the endpoint, the health indicator and the gauges use to show that they need neither Redis nor the
 * Redis engine. It cannot take a lease from its holder, so it is not a {@code LockForceReleaser}. Its renewal status
 * is whatever a test sets, since it renews nothing.
 */
public class InMemoryOperatorLockService extends InMemoryLockService implements LockOperatorView {

	private final Set<String> names = ConcurrentHashMap.newKeySet();

	private final List<Consumer<String>> nameActions = new CopyOnWriteArrayList<>();

	private final Map<String, AtomicInteger> waiting = new ConcurrentHashMap<>();

	private final Map<TrackedLease, LeaseSnapshot> held = new ConcurrentHashMap<>();

	private volatile RenewalStatus renewalStatus = RenewalStatus.HEALTHY;

	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		String name = request.effectiveName();
		if (this.names.add(name)) {
			this.nameActions.forEach(action -> action.accept(name));
		}
		AtomicInteger waiters = this.waiting.computeIfAbsent(name, (key) -> new AtomicInteger());
		waiters.incrementAndGet();
		Optional<Lease> lease;
		try {
			lease = super.tryAcquire(request);
		}
		finally {
			waiters.decrementAndGet();
		}
		return lease.map(this::track);
	}

	private Lease track(Lease lease) {
		TrackedLease tracked = new TrackedLease(lease);
		this.held.put(tracked, new LeaseSnapshot(lease.key(), lease.name(), lease.owner(),
				Thread.currentThread().getName(), Instant.now(), 1, lease.ttl(), lease.ttl(), null, lease.fencingToken(),
				lease.isAutoRenewed(), false));
		return tracked;
	}

	/** Make the engine report this renewal status, as one whose renewals fail would. */
	public void setRenewalStatus(RenewalStatus renewalStatus) {
		this.renewalStatus = renewalStatus;
	}

	@Override
	public String clientId() {
		return "in-memory";
	}

	@Override
	public List<LeaseSnapshot> activeLeases() {
		return List.copyOf(this.held.values());
	}

	@Override
	public int activeLeaseCount() {
		return this.held.size();
	}

	@Override
	public int lostLeaseCount() {
		return 0;
	}

	@Override
	public int waitingThreads() {
		return this.waiting.values().stream().mapToInt(AtomicInteger::get).sum();
	}

	@Override
	public LockActivity activityByName() {
		Map<String, Integer> heldByName = new HashMap<>();
		this.held.values().forEach(lease -> heldByName.merge(lease.name(), 1, Integer::sum));
		Map<String, Integer> waitingByName = new HashMap<>();
		this.waiting.forEach((name, count) -> {
			if (count.get() > 0) {
				waitingByName.put(name, count.get());
			}
		});
		return new LockActivity(heldByName, waitingByName);
	}

	@Override
	public void onLockName(Consumer<String> action) {
		this.nameActions.add(action);
		this.names.forEach(action);
	}

	@Override
	public RenewalStatus renewalStatus() {
		return this.renewalStatus;
	}

	/** A lease that leaves the view when it is released. */
	private final class TrackedLease implements Lease {

		private final Lease delegate;

		TrackedLease(Lease delegate) {
			this.delegate = delegate;
		}

		@Override
		public String key() {
			return this.delegate.key();
		}

		@Override
		public String name() {
			return this.delegate.name();
		}

		@Override
		public String owner() {
			return this.delegate.owner();
		}

		@Override
		public long fencingToken() {
			return this.delegate.fencingToken();
		}

		@Override
		public Duration ttl() {
			return this.delegate.ttl();
		}

		@Override
		public boolean isAutoRenewed() {
			return this.delegate.isAutoRenewed();
		}

		@Override
		public boolean isHeld() {
			return this.delegate.isHeld();
		}

		@Override
		public boolean isLost() {
			return this.delegate.isLost();
		}

		@Override
		public boolean isOwned() {
			return this.delegate.isOwned();
		}

		@Override
		public Instant validUntil() {
			return this.delegate.validUntil();
		}

		@Override
		public void extend(Duration time, ExtendMode mode) {
			this.delegate.extend(time, mode);
		}

		@Override
		public void renew() {
			this.delegate.renew();
		}

		@Override
		public void release() {
			InMemoryOperatorLockService.this.held.remove(this);
			this.delegate.release();
		}

		@Override
		public void close() {
			InMemoryOperatorLockService.this.held.remove(this);
			this.delegate.close();
		}

	}

}
