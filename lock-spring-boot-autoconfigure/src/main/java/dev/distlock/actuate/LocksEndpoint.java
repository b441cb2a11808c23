package dev.distlock.actuate;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockPage;
import dev.distlock.core.LogSafe;
import dev.distlock.core.StoredLock;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.util.Assert;

/**
 * The {@code locks} endpoint: the leases this instance holds now, oldest first, with what an operator needs to find a
 * stuck holder (its thread, since when, the last renewal) and to reason about fencing. Read-only; see
 * {@link ForceReleaseLocksEndpoint} for the opt-in write operation. It reads a {@link LockOperatorView}, so it works on
 * any engine that offers one.
 * <p>
 * Owner ids (and the client id they start with) and fencing tokens are sensitive: whoever can reach Redis can release
 * a lease with its owner id, and a fencing token lets a writer pass a storage's fence. They follow Boot's convention
 * for sensitive values, as the {@code env} endpoint does ({@code management.endpoint.locks.show-values}): shown
 * {@linkplain Show#ALWAYS always}, {@linkplain Show#NEVER never}, or {@linkplain Show#WHEN_AUTHORIZED when the
 * caller is authenticated} and has one of the configured roles; otherwise each reads {@value #MASK}. Over JMX Boot
 * knows no caller, so {@code when-authorized} masks them there.
 *
 * @since 0.1.0
 */
@Endpoint(id = "locks")
public class LocksEndpoint {

	/** The selector of the listing of every lock in the store: {@code GET /actuator/locks/all}. */
	public static final String ALL = "all";

	/** The page size of {@code GET /actuator/locks/all} when the request names none. */
	public static final int DEFAULT_PAGE_SIZE = 100;

	/** What a masked value reads: Boot's sanitized value. */
	public static final String MASK = SanitizableData.SANITIZED_VALUE;

	private final LockOperatorView operatorView;

	private final Show showValues;

	private final Set<String> roles;

	/**
	 * An endpoint over the given engine's leases that shows owner ids and fencing tokens to authenticated callers only.
	 * @param operatorView the engine whose leases are listed
	 */
	public LocksEndpoint(LockOperatorView operatorView) {
		this(operatorView, Show.WHEN_AUTHORIZED, Set.of());
	}

	/**
	 * An endpoint over the given engine's leases with its own rule for showing owner ids and fencing tokens.
	 * @param operatorView the engine whose leases are listed
	 * @param showValues when owner ids and fencing tokens are shown
	 * @param roles the roles of which a caller needs one for {@link Show#WHEN_AUTHORIZED}; empty: any authenticated
	 * caller
	 */
	public LocksEndpoint(LockOperatorView operatorView, Show showValues, Set<String> roles) {
		Assert.notNull(operatorView, "'operatorView' must not be null");
		Assert.notNull(showValues, "'showValues' must not be null");
		Assert.notNull(roles, "'roles' must not be null");
		this.operatorView = operatorView;
		this.showValues = showValues;
		this.roles = Set.copyOf(roles);
	}

	/**
	 * The leases this instance holds now, and lost ones whose holders have not released them yet.
	 * @return the instance's client id, its waiting threads and its leases, oldest first
	 * @param securityContext the caller, whose roles decide whether owner ids and tokens are shown
	 */
	@ReadOperation
	public LocksDescriptor locks(SecurityContext securityContext) {
		boolean show = showValues(securityContext);
		List<LeaseDescriptor> leases = this.operatorView.activeLeases().stream()
			.sorted(Comparator.comparing(LeaseSnapshot::heldSince).thenComparing(LeaseSnapshot::key))
			.map(lease -> LeaseDescriptor.of(lease, show, (lease.mode() == LockMode.FAIR && !lease.lost())
					? this.operatorView.fairQueueLength(lease.key()) : null))
			.toList();
		return new LocksDescriptor(show ? this.operatorView.clientId() : MASK, this.operatorView.waitingThreads(),
				leases);
	}

	/**
	 * Every lock in the store under the key prefix, whichever instance holds it, a page at a time:
	 * {@code GET /actuator/locks/all?size=100} for the first page, then {@code &cursor=} the page's
	 * {@code nextCursor} until it is {@code null}. Read from Redis when called ({@code SCAN}, on every master of a
	 * Cluster, the nodes of a Redlock merged); see {@link LockDirectory} for what a listing promises. Answers 404
	 * when the engine cannot list its store.
	 * @param scope {@code all}, the only listing there is
	 * @param cursor the previous page's {@code nextCursor}; none for the first page
	 * @param size about how many locks a page lists: 1 to {@value LockDirectory#MAX_PAGE_SIZE}, 100 when not given
	 * @param securityContext the caller, whose roles decide whether holders and tokens are shown
	 * @return the page, or {@code null} (404) when the engine is no {@link LockDirectory}
	 */
	@ReadOperation
	public @Nullable StoredLocksDescriptor stored(@Selector String scope, @Nullable String cursor,
			@Nullable Integer size, SecurityContext securityContext) {
		if (!ALL.equals(scope)) {
			throw new InvalidEndpointRequestException("Unknown view '" + LogSafe.escape(scope)
					+ "' of the locks endpoint: GET /actuator/locks/all lists every lock in the store",
					"Unknown view of the locks endpoint");
		}
		if (!(this.operatorView instanceof LockDirectory directory)) {
			return null;
		}
		int pageSize = (size != null) ? size : DEFAULT_PAGE_SIZE;
		if (pageSize < 1 || pageSize > LockDirectory.MAX_PAGE_SIZE) {
			throw new InvalidEndpointRequestException("'size' must be 1 to " + LockDirectory.MAX_PAGE_SIZE + ", not "
					+ pageSize, "'size' out of range");
		}
		LockPage page;
		try {
			page = directory.locks(cursor, pageSize);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid cursor");
		}
		boolean show = showValues(securityContext);
		return new StoredLocksDescriptor(page.locks().stream().map((lock) -> StoredLockDescriptor.of(lock, show))
			.toList(), page.nextCursor());
	}

	/** {@return the engine whose leases this endpoint shows} */
	protected final LockOperatorView getOperatorView() {
		return this.operatorView;
	}

	/**
	 * Whether the caller may see owner ids and fencing tokens.
	 * @param securityContext the caller
	 * @return true when owner ids and fencing tokens may be shown
	 */
	protected final boolean showValues(SecurityContext securityContext) {
		return this.showValues.isShown(securityContext, this.roles);
	}

	/**
	 * What this instance holds.
	 *
	 * @param clientId the instance's client id: the prefix of the owner id of each lease it holds (or {@value #MASK})
	 * @param waitingThreads threads of this instance waiting for a lock held elsewhere
	 * @param leases the leases it holds (and lost ones not yet released), oldest first
	 */
	public record LocksDescriptor(String clientId, int waitingThreads, List<LeaseDescriptor> leases) {
	}

	/**
	 * One lease this instance holds, or lost while its holder has not released it yet.
	 *
	 * @param key the lock key
	 * @param name the lock's name (the annotation's name, or the method)
	 * @param owner the owner id stored in Redis: client id and 128 random bits (or {@value #MASK})
	 * @param ownerThread the name of the thread that acquired it
	 * @param heldSince when it was acquired
	 * @param holdCount open holds (re-entries)
	 * @param ttlMillis the lease time
	 * @param ttlRemainingMillis the lease time left as this instance last confirmed it with Redis; 0 once lost
	 * @param lastRenewal when the watchdog last renewed it, {@code null} if not yet
	 * @param fencingToken the lease's fencing token, a number (or {@value #MASK})
	 * @param autoRenewed whether the watchdog renews it
	 * @param lost whether it was found lost (its holder has not released it yet; it is listed until then)
	 * @param mode the lock mode: {@code EXCLUSIVE}, {@code FAIR}, {@code READ}, {@code WRITE} (a writer that
	 * downgraded is listed twice, with its write and its read lease) or {@code PERMITS} (one permit of a semaphore: each
	 * permit this instance holds is listed, one per owner)
	 * @param queueLength for a fair lock: the waiters of all instances queued for it, read from Redis when the
	 * endpoint was read (-1 if it did not answer); {@code null} for other modes
	 */
	public record LeaseDescriptor(String key, String name, String owner, String ownerThread, Instant heldSince,
			int holdCount, long ttlMillis, long ttlRemainingMillis, @Nullable Instant lastRenewal, Object fencingToken,
			boolean autoRenewed, boolean lost, LockMode mode, @Nullable Long queueLength) {

		/**
		 * An exclusive lease's descriptor (the form before lock modes existed).
		 * @param key the lock key
		 * @param name the lock's name
		 * @param owner the owner id (or {@value #MASK})
		 * @param ownerThread the name of the thread that acquired it
		 * @param heldSince when it was acquired
		 * @param holdCount open holds
		 * @param ttlMillis the lease time
		 * @param ttlRemainingMillis the lease time left
		 * @param lastRenewal the last renewal, or {@code null}
		 * @param fencingToken the fencing token (or {@value #MASK})
		 * @param autoRenewed whether the watchdog renews it
		 * @param lost whether it was found lost
		 */
		public LeaseDescriptor(String key, String name, String owner, String ownerThread, Instant heldSince,
				int holdCount, long ttlMillis, long ttlRemainingMillis, @Nullable Instant lastRenewal,
				Object fencingToken, boolean autoRenewed, boolean lost) {
			this(key, name, owner, ownerThread, heldSince, holdCount, ttlMillis, ttlRemainingMillis, lastRenewal,
					fencingToken, autoRenewed, lost, LockMode.EXCLUSIVE, null);
		}

		static LeaseDescriptor of(LeaseSnapshot lease, boolean showValues, @Nullable Long queueLength) {
			return new LeaseDescriptor(lease.key(), lease.name(), showValues ? lease.owner() : MASK, lease.ownerThread(),
					lease.heldSince(), lease.holdCount(), lease.ttl().toMillis(), lease.ttlRemaining().toMillis(),
					lease.lastRenewal(), showValues ? lease.fencingToken() : MASK, lease.autoRenewed(), lease.lost(),
					lease.mode(), queueLength);
		}

	}

	/**
	 * A page of every lock in the store.
	 *
	 * @param locks the locks of the page, in the store's scan order
	 * @param nextCursor the {@code cursor} of the next page; {@code null} after the last
	 */
	public record StoredLocksDescriptor(List<StoredLockDescriptor> locks, @Nullable String nextCursor) {
	}

	/**
	 * A lock as the store holds it, whichever instance holds it.
	 *
	 * @param key the lock key
	 * @param mode {@code EXCLUSIVE}, {@code FAIR} (a fair lock with waiters queued; one without waiters is stored as
	 * an exclusive one is), {@code READ}, {@code WRITE} or {@code PERMITS} (a semaphore: {@code holds} counts the open
	 * holds of all its permits' holders)
	 * @param holder who holds it, when the store has it: application, instance and owner (or {@value #MASK})
	 * @param holds open holds of all its holders (re-entries count)
	 * @param ttlRemainingMillis the time Redis keeps the lease unless renewed, extended or released
	 * @param fencingToken the lease's fencing token (or {@value #MASK})
	 * @param queueLength for a fair lock, the waiters queued; -1 otherwise
	 * @param waitingInstances the instances that noted in the lease that they wait for it (-1 for a fair lock)
	 * @param nodes the store's nodes that hold it: 1, except on Redlock
	 */
	public record StoredLockDescriptor(String key, LockMode mode, @Nullable String holder, int holds,
			long ttlRemainingMillis, Object fencingToken, long queueLength, int waitingInstances, int nodes) {

		static StoredLockDescriptor of(StoredLock lock, boolean showValues) {
			String holder = (lock.holder() == null || showValues) ? lock.holder() : MASK;
			return new StoredLockDescriptor(lock.key(), lock.mode(), holder, lock.holds(),
					lock.remainingTtl().toMillis(), showValues ? lock.fencingToken() : MASK, lock.queueLength(),
					lock.waitingInstances(), lock.nodes());
		}

	}

}
