package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LockDirectory;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockSettings;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.lease.LeaseView;
import dev.distlock.redis.internal.lease.LockListing;
import dev.distlock.redis.internal.redlock.RedlockAcquirer;
import dev.distlock.redis.internal.redlock.RedlockListing;
import dev.distlock.redis.internal.redlock.NodeReplies;
import dev.distlock.redis.internal.redlock.RedlockNodes;
import dev.distlock.redis.internal.redlock.RedlockReconcilers;
import dev.distlock.redis.internal.redlock.RedlockRegistry;
import dev.distlock.redis.internal.redlock.RedlockReleaser;
import dev.distlock.redis.internal.redlock.RedlockWaiting;
import dev.distlock.redis.internal.redlock.RedlockWatchdog;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.support.EngineThreads;
import dev.distlock.redis.internal.wait.ForcedReleaser;
import org.jspecify.annotations.Nullable;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * {@link LockService} over N independent Redis masters (Redlock): a lease is held when a quorum (N/2 + 1) of them
 * granted it within its validity, so a master's crash or restart loses no lease as long as a quorum stays up. Every
 * node runs the same lease scripts as the single-node {@link RedisLockService}; re-entry, the watchdog, release
 * messages, events, listeners, the operator's view and the forced release work as there.
 * <p>
 * The {@linkplain Lease#fencingToken() fencing token} of a lease is the greatest of the tokens its granting nodes
 * issued (each the node's clock in microseconds, at least one more than that node's previous token on the key). Any
 * two quorums share a node, and that node's tokens grow with each new holder; so a later holder's token is greater
 * than an earlier one's as long as no node's clock is ahead of the shared node's by more than the time between the
 * two acquisitions, and no node's clock steps back. Tokens live in no stored state, so a node restarted without its
 * data does not reset them. See "Redlock" in the reference guide (docs/guide/cluster-sentinel-redlock.md) for what
 * this does and does not promise.
 * <p>
 * This class assembles the engine: {@link RedlockNodes} (the parallel calls), {@link RedlockAcquirer},
 * {@link RedlockReleaser}, {@link RedlockWatchdog}, {@link RedlockWaiting} and {@link RedlockRegistry}. Hand-overs
 * between threads of this process are not done here: every new holder acquires on a quorum.
 *
 * @since 0.1.0
 */
public class RedlockLockService extends EngineService
		implements LockService, LockOperatorView, LockForceReleaser, LockDirectory, SmartLifecycle, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedlockLockService.class);

	private final RedlockNodes nodes;

	private final RedlockRegistry registry;

	private final RedlockWaiting waiting;

	private final RedlockWatchdog watchdog;

	private final RedlockReconcilers reconcilers;

	private final RedlockAcquirer acquirer;

	private final List<ForcedReleaser> forcedReleasers = new ArrayList<>();

	private final RedlockListing listing;

	private final LeaseView view;

	/**
	 * A service as the builder describes it; use {@link #builder(List)}.
	 * @param builder the settings
	 */
	protected RedlockLockService(RedlockLockServiceBuilder builder) {
		super(builder.settings.keyPrefix);
		List<LockListener> listeners = List.copyOf(builder.settings.listeners);
		String threadName = builder.settings.threadNamePrefix + "-" + clientId().substring(0, 6);
		EngineThreads threads = new EngineThreads(builder.settings.threadFactory);
		this.nodes = new RedlockNodes(builder.nodes,
				(builder.nodeTimeout != null) ? builder.nodeTimeout.toNanos() : 0, builder.driftFactor,
				builder.restartQuarantine.toMillis(), threads, threadName + "-node");
		// the events thread starts with the first event or lost-lease action only
		this.registry = new RedlockRegistry(listeners, builder.settings.eventPublisher,
				threads.singleThread(threadName + "-events"));
		this.waiting = new RedlockWaiting(builder.nodes, this.keyPrefix + ":__subscriber__",
				builder.settings.idleUnsubscribe.toNanos(), threads, threadName + "-pubsub",
				EnginePaths.DEFAULT.listenerContainer(), listeners);
		this.reconcilers = new RedlockReconcilers(this.nodes, listeners, threads, threadName + "-reconcile");
		this.watchdog = new RedlockWatchdog(this.nodes, this.registry, this.reconcilers, listeners,
				builder.settings.renewalRatio, threads, threadName + "-watchdog");
		RedlockReleaser releaser = new RedlockReleaser(this.nodes, this.registry, this.reconcilers, listeners,
				clientId());
		this.acquirer = new RedlockAcquirer(this.nodes, this.registry, this.waiting, releaser, this.watchdog,
				this.reconcilers, listeners, clientId(), ownerIds(null), builder.settings.holderApplication,
				builder.settings.holderInstanceOrHost(), builder.settings.storeHolderLabel);
		this.listing = new RedlockListing(this.nodes, this.keyPrefix);
		this.view = new LeaseView(this.registry, this.waiting::waiterCount, this.waiting::waitersByName);
		for (int i = 0; i < this.nodes.size(); i++) {
			this.forcedReleasers.add(this.waiting.forcedReleaser(i, this.nodes.store(i), clientId()));
		}
	}

	/** {@return the tie-breaker node of lock {@code key}, which orders its contenders (for tests)} */
	int tieBreaker(String key) {
		return this.nodes.tieBreaker(redisKey(key));
	}

	/**
	 * Start building a service on the given independent Redis masters.
	 * @param nodes one connection factory per master; an odd number, at least 3
	 * @return a builder with the defaults
	 */
	public static RedlockLockServiceBuilder builder(List<RedisConnectionFactory> nodes) {
		return new RedlockLockServiceBuilder(nodes);
	}

	/** Why Redlock takes no permits: a quorum per permit is not sound. */
	private static final String PERMITS_REFUSAL = "a majority of nodes per permit does not bound the holders by the "
			+ "number of permits (with 3 nodes and 2 permits, three holders can each hold nodes 1-2, 2-3 and 1-3)";

	/**
	 * {@inheritDoc} Redlock takes exclusive locks only: fair, read-write and permits would each need a queue, a mode or
	 * a count kept across independent nodes, and a majority per permit does not even bound a semaphore's holders.
	 */
	@Override
	public Optional<String> modeRefusal(LockMode mode) {
		return switch (mode) {
			case EXCLUSIVE -> Optional.empty();
			case PERMITS -> Optional.of(PERMITS_REFUSAL);
			default -> Optional.of("the Redlock engine takes exclusive locks only");
		};
	}

	/**
	 * {@inheritDoc}
	 * @throws IllegalArgumentException if the lease time is shorter than three per-node timeouts
	 * @throws UnsupportedOperationException for a fair, read or write lock or permits: Redlock takes exclusive locks
	 * only
	 */
	@Override
	public Optional<Lease> tryAcquire(LockRequest request) {
		checkAcquirable(request);
		if (request.mode() == LockMode.PERMITS) { // the one refusal whose reason the message adds
			throw request.mode().unsupported(request.key(), "the Redlock engine: " + PERMITS_REFUSAL);
		}
		if (request.mode() != LockMode.EXCLUSIVE) {
			throw request.mode().unsupported(request.key(), "the Redlock engine");
		}
		long minTtlNanos = 3 * this.nodes.minTimeoutNanos();
		if (request.ttl().toNanos() < minTtlNanos) {
			throw new IllegalArgumentException("'ttl' of lock '" + LogSafe.escape(request.key())
					+ "' must be at least three Redlock "
					+ "per-node timeouts (" + Duration.ofNanos(minTtlNanos) + "), but was " + request.ttl());
		}
		this.view.noteName(request.effectiveName());
		return this.acquirer.tryAcquire(request, redisKey(request.key()));
	}

	/**
	 * {@inheritDoc} Held means held on a quorum of the nodes: the token is the greatest they report, the remaining time
	 * the one a quorum has at least. The token is usually the holder's lease's own; it is greater when the lease also
	 * took a node whose grant came after the quorum's (adopted so that the watchdog renews it there too) and that node
	 * issued a greater token than the granting nodes did. It is never less than the lease's. The holder's label is
	 * that of the node with the greatest token that has one (every node of one lease stores the same label).
	 */
	@Override
	public Optional<LockHolder> holder(String key) {
		LockSettings.checkKey(key, "'key'");
		String redisKey = redisKey(key);
		LeaseStore.Held free = new LeaseStore.Held(0, 0, 0, null);
		NodeReplies<LeaseStore.Held> replies = this.nodes.onAll((node, store) -> {
			LeaseStore.Held held = store.holder(redisKey);
			return (held != null) ? held : free;
		});
		List<LeaseStore.Held> held = new ArrayList<>();
		int answered = 0;
		for (int i = 0; i < replies.size(); i++) {
			LeaseStore.Held value = replies.value(i);
			if (value != null) {
				answered++;
				if (value != free) {
					held.add(value);
				}
			}
		}
		int quorum = this.nodes.quorum();
		if (held.size() >= quorum) {
			String labels = held.stream()
				.filter((h) -> h.labels() != null)
				.max(Comparator.comparingLong(LeaseStore.Held::token))
				.map(LeaseStore.Held::labels)
				.orElse(null);
			held.sort(Comparator.comparingLong(LeaseStore.Held::pttl).reversed());
			long token = held.stream().mapToLong(LeaseStore.Held::token).max().orElse(0);
			LeaseStore.Held quorumth = held.get(quorum - 1);
			return Optional.of(new LockHolder(key, (int) Math.max(1, quorumth.holds()),
					Duration.ofMillis(Math.max(0, quorumth.pttl())), token, labels));
		}
		if (answered - held.size() >= quorum) {
			return Optional.empty();
		}
		throw new LockUnavailableException(key, "Could not ask who holds '" + key + "': only " + answered + " of "
				+ this.nodes.size() + " Redlock nodes answered", replies.anyFailure());
	}

	/**
	 * {@inheritDoc} On every node at once, each deleting whatever lease it has on the key; the reply describes the
	 * owner that most nodes had, with the greatest token and the greatest hold count they reported (a node whose
	 * grant came after the quorum's, adopted by the lease, may have issued a greater token, and may not have counted
	 * a re-entry that the quorum counted). The holder finds its lease lost at its next renewal or release.
	 * @throws LockUnavailableException if no node deleted a lease and fewer than a quorum answered
	 */
	@Override
	public Optional<ForcedRelease> forceRelease(String key) {
		LockSettings.checkKey(key, "'key'");
		String redisKey = redisKey(key);
		NodeReplies<Optional<ForcedRelease>> replies = this.nodes
			.onAll((node, store) -> this.forcedReleasers.get(node).forceRelease(key, redisKey));
		Map<String, List<ForcedRelease>> byOwner = new HashMap<>();
		int answered = 0;
		for (int i = 0; i < replies.size(); i++) {
			Optional<ForcedRelease> released = replies.value(i);
			if (released != null) {
				answered++;
				released.ifPresent(r -> byOwner.computeIfAbsent(r.owner(), o -> new ArrayList<>()).add(r));
			}
		}
		// the holder is the owner most nodes had (others are attempts that met a node the holder did not have)
		Optional<ForcedRelease> holder = byOwner.values().stream()
			.max(Comparator.<List<ForcedRelease>>comparingInt(List::size)
				.thenComparingLong(list -> list.stream().mapToLong(ForcedRelease::fencingToken).max().orElse(0)))
			.map(RedlockLockService::merged);
		if (holder.isEmpty() && answered < this.nodes.quorum()) {
			throw new LockUnavailableException(key, "Could not force-release '" + key + "': only " + answered + " of "
					+ this.nodes.size() + " Redlock nodes answered", replies.anyFailure());
		}
		return holder;
	}

	/** One owner's forced releases on several nodes as one: its greatest token, and its greatest hold count. */
	private static ForcedRelease merged(List<ForcedRelease> releases) {
		ForcedRelease newest = releases.stream().max(Comparator.comparingLong(ForcedRelease::fencingToken)).orElseThrow();
		long holds = releases.stream().mapToLong(ForcedRelease::holdCount).max().orElse(newest.holdCount());
		return (holds == newest.holdCount()) ? newest
				: new ForcedRelease(newest.key(), newest.owner(), holds, newest.fencingToken(), newest.owners(),
						newest.holders());
	}

	/**
	 * {@inheritDoc} The nodes are scanned in turn, each lock listed once, with the nodes that hold it; a node that does
	 * not answer is skipped. Needs {@code +scan} in an ACL.
	 */
	@Override
	public LockPage locks(@Nullable String cursor, int pageSize) {
		return LockListing.page(this.listing, cursor, pageSize, this.keyPrefix);
	}

	@Override
	LeaseView view() {
		return this.view;
	}

	/** {@return how many nodes this service locks on} */
	public int nodeCount() {
		return this.nodes.size();
	}

	@Override
	public void close() {
		if (!markClosed()) {
			return;
		}
		int held = this.view.activeLeaseCount();
		if (held > 0) {
			logger.warn("Redlock service stops with " + held + " lease(s) held, no longer renewed; they expire within "
					+ "their lease times");
		}
		this.watchdog.close();
		this.reconcilers.close();
		this.waiting.close();
		this.registry.close();
		this.nodes.close();
	}

}
