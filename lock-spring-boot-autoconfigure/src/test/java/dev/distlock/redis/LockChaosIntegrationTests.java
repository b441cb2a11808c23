package dev.distlock.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.observability.LockMetrics;
import dev.distlock.redis.ChaosLedger.Holder;
import dev.distlock.redis.ChaosLedger.Overlap;
import dev.distlock.redis.ChaosLedger.ReleaseOutcome;
import dev.distlock.redis.ChaosLedger.ReleaseRecord;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several services, several threads each, a few keys, and random faults between them and their Redis: latency,
 * partitions that deliver late, lost replies, resets, a frozen server and a restart that loses all data. The workers
 * write a counter per key in a separate, never faulted store, fenced by their lease's token. Checked throughout and at
 * the end:
 * <ol>
 * <li>fenced writes never go backwards, and a write is rejected only for a lease whose loss was surfaced (or whose
 * release went unanswered, so that its holder was told nothing is known);</li>
 * <li>the services' picture and Redis's do not drift for longer than a lease time ({@link LeaseAuditor});</li>
 * <li>once the workers stop and the faults heal, the lock server's keyspace is empty within a lease time and a
 * margin;</li>
 * <li>every loss is surfaced: each {@link LockLostEvent} has a {@link LockLostException} from its lease's last
 * release (same owner and token) and a meter count, and each such exception has its event.</li>
 * </ol>
 * Two holders of a key inside their critical sections at once are counted (the lock alone cannot prevent it after a
 * loss: that is what the fencing tokens are for), and each such overlap must be explained by the loss of the older
 * lease. One key is a semaphore of {@value #PERMITS} permits (issue 30): its holders make no fenced writes (several
 * hold it at once, each with its own token), and more than {@value #PERMITS} of them inside at once is an excess
 * that the losses of enough of them must explain; the auditor checks each permit as a lease of its own, and never more
 * live holders than permits in Redis. The chaos lasts {@code chaos.duration} (default {@code PT15S}); {@code -Dchaos.duration=PT5M} is the long
 * mode, and {@code -Dchaos.seed=} replays a run's choices (the threads' interleaving aside). The summary line goes to
 * stdout and to {@code target/chaos-summary.txt}; docs/chaos.md has the commands and a long run's figures.
 */
class LockChaosIntegrationTests {

	private static final Duration TTL = Duration.ofMillis(1500);

	/** The builder's default renewal ratio (1/3) of the lease time. */
	private static final Duration RENEWAL_PERIOD = TTL.dividedBy(3);

	/** Short, so that a fault resolves into a timeout well within a lease time. */
	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(750);

	/**
	 * How long the services' picture and Redis's may differ: see {@link LeaseAuditor}. The margin covers a loaded
	 * machine's stalls (1-2 s, issue 32), after which the auditor may look before the watchdog has.
	 */
	private static final Duration GRACE = TTL.plus(RENEWAL_PERIOD).plusSeconds(3);

	/** Beyond one lease time, for discards and late scripts to run once everything is healed, and for stalls. */
	private static final Duration QUIESCENCE_MARGIN = Duration.ofSeconds(5);

	private static final int SERVICES = 3;

	private static final int WORKERS_PER_SERVICE = 4;

	/** Keys taken with a wait and held for moments: contention, waiters, hand-overs. */
	private static final int HOT_KEYS = 4;

	/**
	 * Keys taken without waiting and held for one to five lease times: the watchdog renews them under the faults, and
	 * a holder outlives the auditor's grace, so a lease believed held that Redis lost is caught before its release
	 * would find out. Apart from the hot keys, which long holds would starve.
	 */
	private static final int SLOW_KEYS = 3;

	private static final int SLOW_PERCENT = 10;

	private static final int REENTRY_PERCENT = 10;

	/** The permits of the semaphore key: its holders may be this many inside at once. */
	private static final int PERMITS = 3;

	/**
	 * Operations on the semaphore key, taken with a wait and held for moments like the hot keys: with 12 workers, about
	 * as many at once as it has permits, so that some wait.
	 */
	private static final int PERMITS_PERCENT = 25;

	private static final String KEY_PREFIX = "lock";

	/** The key and lock name of the warm-up. */
	private static final String WARM_UP = "warm-up";

	private final ChaosLedger ledger = new ChaosLedger();

	private final Map<String, Section> sections = new HashMap<>();

	private final List<RedisLockService> services = new ArrayList<>();

	private final List<SimpleMeterRegistry> registries = new ArrayList<>();

	private FencedStore store;

	/** Counted down when the chaos ends: workers finish their operation, a long one at once. */
	private final CountDownLatch stopping = new CountDownLatch(1);

	private volatile boolean auditing = true;

	@Test
	void locksStayCorrectAndObservableUnderRandomFaults() throws Exception {
		Duration duration = Duration.parse(System.getProperty("chaos.duration", "PT15S"));
		String seedProperty = System.getProperty("chaos.seed");
		long seed = (seedProperty != null && !seedProperty.isBlank()) ? Long.parseLong(seedProperty.trim())
				: new SecureRandom().nextLong();
		System.out.println("chaos: seed " + seed + ", duration " + duration + " (replay with -Dchaos.seed=" + seed + ")");
		long began = System.nanoTime();
		for (String key : allKeys()) {
			this.sections.put(key, new Section(key.equals(permitsKey()) ? PERMITS : 1));
		}
		ClientResources resources = DefaultClientResources.builder()
			.reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(500), 2, TimeUnit.MILLISECONDS))
			.build();
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		List<FaultProxy> proxies = new ArrayList<>();
		try (RedisServer lockServer = RedisServer.start(); RedisServer storeServer = RedisServer.start()) {
			try {
				LettuceConnectionFactory storeFactory = factory(storeServer.host(), storeServer.port(),
						Duration.ofSeconds(10), resources);
				factories.add(storeFactory);
				this.store = new FencedStore(LockTestSupport.template(storeFactory));
				for (int s = 0; s < SERVICES; s++) {
					FaultProxy proxy = FaultProxy.to(lockServer);
					proxies.add(proxy);
					LettuceConnectionFactory factory = factory(proxy.host(), proxy.port(), COMMAND_TIMEOUT, resources);
					factories.add(factory);
					SimpleMeterRegistry registry = new SimpleMeterRegistry();
					this.registries.add(registry);
					this.services.add(RedisLockService.builder(factory).keyPrefix(KEY_PREFIX)
						.threadNamePrefix("chaos-" + s).listener(new LockMetrics(registry)).listener(new LockListener() {
							@Override
							public void lost(LockLostEvent event) {
								if (!WARM_UP.equals(event.name())) {
									LockChaosIntegrationTests.this.ledger.lost(event);
								}
							}
						}).build());
				}
				long setUp = System.nanoTime();
				warmUp();
				System.out.println("chaos: set up in " + TimeUnit.NANOSECONDS.toMillis(setUp - began) + "ms, warmed up in "
						+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - setUp) + "ms");
				String summary = chaos(lockServer, proxies, duration, seed);
				System.out.println(summary);
				Path file = Path.of("target", "chaos-summary.txt");
				Files.createDirectories(file.getParent());
				Files.writeString(file, summary + System.lineSeparator(), StandardCharsets.UTF_8);
			}
			finally {
				this.services.forEach(RedisLockService::close);
				proxies.forEach(FaultProxy::close);
				factories.forEach(LettuceConnectionFactory::destroy);
				resources.shutdown(0, 2, TimeUnit.SECONDS);
			}
		}
		System.out.println("chaos: " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began) + "ms in all");
		assertThat(this.ledger.violations()).isEmpty();
	}

	private String chaos(RedisServer lockServer, List<FaultProxy> proxies, Duration duration, long seed)
			throws InterruptedException, IOException {
		ChaosFaults faults = new ChaosFaults(lockServer, proxies, new Random(seed), TTL, this.ledger);
		LeaseAuditor auditor = new LeaseAuditor(lockServer, this.services, KEY_PREFIX + ":*", GRACE, this.ledger,
				faults::current);
		long startedAt = System.nanoTime();
		long endAt = startedAt + duration.toNanos();
		List<Thread> threads = new ArrayList<>();
		Thread faulting = start("chaos-faults", () -> faults.run(endAt));
		Random auditPace = new Random(seed - 1);
		Thread auditorThread = start("chaos-auditor", () -> {
			while (this.auditing) {
				auditor.check();
				TimeUnit.MILLISECONDS.sleep(100 + auditPace.nextInt(101)); // pacing, not synchronisation
			}
		});
		for (int s = 0; s < SERVICES; s++) {
			for (int w = 0; w < WORKERS_PER_SERVICE; w++) {
				int service = s;
				Random random = new Random(seed + 1 + s * WORKERS_PER_SERVICE + w);
				threads.add(start("chaos-worker-" + s + "-" + w, () -> work(this.services.get(service), random)));
			}
		}

		join(faulting, duration.plusSeconds(30));
		this.stopping.countDown();
		for (Thread thread : threads) {
			join(thread, TTL.multipliedBy(3).plusSeconds(20));
		}
		faults.healAll(); // already healed by the driver; the quiescence starts from here either way
		long quietAt = System.nanoTime();
		for (int s = 0; s < SERVICES; s++) {
			if (!this.services.get(s).activeLeases().isEmpty()) {
				this.ledger.violation("service " + s + " still lists leases after its workers released everything: "
						+ this.services.get(s).activeLeases());
			}
		}
		long emptyAfterMillis = awaitEmptyKeyspace(lockServer, quietAt);
		this.auditing = false;
		join(auditorThread, Duration.ofSeconds(10));
		auditor.check(); // nothing is held now: every suspect resolves
		if (auditor.openSuspects() != 0) {
			this.ledger.violation(auditor.openSuspects() + " audit suspects still open after quiescence");
		}
		Duration ran = Duration.ofNanos(quietAt - startedAt);
		checkFencedWrites();
		checkLossesSurfaced();
		return summary(seed, duration, ran, emptyAfterMillis);
	}

	/**
	 * A fenced write, then one lease per service until its first renewal, before the chaos: the first calls load
	 * classes and scripts, which on a loaded machine can take longer than a lease time and would make the first leases
	 * lost for no fault. Under their own lock name, which the checks leave out: a loss here is the machine's, not the
	 * engine's.
	 */
	private void warmUp() {
		this.store.increment(WARM_UP, 0);
		for (RedisLockService service : this.services) {
			// the semaphore's scripts, loaded before the chaos as the locks' are by the leases below
			service.acquire(LockRequest.of(WARM_UP + "-permits", TTL.multipliedBy(2), Duration.ofSeconds(10))
				.withName(WARM_UP)
				.permits(PERMITS)).release();
		}
		List<Lease> leases = new ArrayList<>();
		for (int s = 0; s < SERVICES; s++) {
			leases.add(this.services.get(s)
				.acquire(LockRequest.of(WARM_UP + "-" + s, TTL.multipliedBy(2), Duration.ofSeconds(10)).withName(WARM_UP)));
		}
		for (int s = 0; s < SERVICES; s++) {
			RedisLockService locks = this.services.get(s);
			Lease lease = leases.get(s);
			await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> lease.isLost()
					|| locks.activeLeases().stream().anyMatch(snapshot -> snapshot.lastRenewal() != null));
			try {
				lease.release();
			}
			catch (LockLostException ex) {
				// the machine was too slow for even that: the chaos starts warm all the same
			}
		}
	}

	// workers

	private void work(RedisLockService locks, Random random) {
		while (this.stopping.getCount() > 0) {
			this.ledger.count("operations");
			try {
				int choice = random.nextInt(100);
				boolean slow = choice < SLOW_PERCENT;
				boolean permit = !slow && choice < SLOW_PERCENT + PERMITS_PERCENT;
				Duration wait = Duration.ofMillis(300 + random.nextInt(701));
				Lease lease = slow ? acquire(locks, LockRequest.of(slowKey(random.nextInt(SLOW_KEYS)), TTL, Duration.ZERO),
						"slow")
						: permit ? acquire(locks, LockRequest.of(permitsKey(), TTL, wait).permits(PERMITS), "permits")
								: acquire(locks, LockRequest.of(key(random.nextInt(HOT_KEYS)), TTL, wait), "acquire");
				if (lease != null) {
					hold(locks, lease, slow, random);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.ledger.violation(Thread.currentThread().getName() + " was interrupted");
				return;
			}
			catch (RuntimeException ex) {
				this.ledger.violation(Thread.currentThread().getName() + " failed: " + ex);
				ex.printStackTrace();
			}
		}
	}

	private Lease acquire(RedisLockService locks, LockRequest request, String what) {
		try {
			Optional<Lease> lease = locks.tryAcquire(request);
			this.ledger.count(what + (lease.isPresent() ? ".acquired" : ".not-acquired"));
			return lease.orElse(null);
		}
		catch (LockUnavailableException ex) {
			this.ledger.count(what + ".unavailable");
			if (isTimeout(ex)) {
				this.ledger.count(what + ".unavailable-timeouts");
			}
			return null;
		}
	}

	/**
	 * The critical section: a fenced write, sometimes a re-entry, the work, a second fenced write; then release. A
	 * permit's holder writes nothing: the semaphore lets several in at once, whose tokens the store would order.
	 */
	private void hold(RedisLockService locks, Lease lease, boolean slow, Random random) throws InterruptedException {
		Holder holder = new Holder(lease.key(), lease.owner(), lease.fencingToken());
		Section section = this.sections.get(lease.key());
		boolean fenced = section.limit == 1;
		section.enter(holder);
		try {
			if (fenced) {
				write(holder);
			}
			if (random.nextInt(100) < REENTRY_PERCENT) {
				reenter(locks, lease, slow, random);
			}
			if (slow) {
				long ttl = TTL.toMillis();
				this.stopping.await(ttl + random.nextInt((int) (4 * ttl)), TimeUnit.MILLISECONDS); // the work
			}
			else {
				TimeUnit.MILLISECONDS.sleep(random.nextInt(3)); // the work
			}
			if (fenced) {
				write(holder);
			}
		}
		finally {
			section.exit(holder);
			release(lease, true);
		}
	}

	private void reenter(RedisLockService locks, Lease outer, boolean slow, Random random) throws InterruptedException {
		LockRequest request = LockRequest.of(outer.key(), TTL, Duration.ofMillis(200));
		boolean permit = outer.key().equals(permitsKey());
		Lease inner = acquire(locks, permit ? request.permits(PERMITS) : request, permit ? "reentry-permit" : "reentry");
		if (inner == null) {
			return;
		}
		if (!inner.owner().equals(outer.owner())) {
			// the outer lease was found lost meanwhile, and this is a new lease of the key: a holder of its own
			this.ledger.count("reentry.new-lease");
			hold(locks, inner, slow, random);
			return;
		}
		if (inner.fencingToken() != outer.fencingToken()) {
			this.ledger.violation("a re-entry of " + outer + " got token " + inner.fencingToken());
		}
		if (!permit) {
			write(new Holder(outer.key(), outer.owner(), outer.fencingToken()));
		}
		release(inner, false);
	}

	private void write(Holder holder) {
		FencedStore.Write write = this.store.increment(holder.key(), holder.token());
		if (write.accepted()) {
			this.ledger.count("writes.accepted");
			if (write.previousToken() > holder.token()) {
				this.ledger.violation("the store accepted token " + holder.token() + " of " + holder
						+ " after token " + write.previousToken());
			}
		}
		else {
			this.ledger.count("writes.rejected");
			this.ledger.rejectedWrites.add(holder);
		}
	}

	private void release(Lease lease, boolean last) {
		ReleaseOutcome outcome;
		try {
			lease.release();
			outcome = ReleaseOutcome.RELEASED;
		}
		catch (LockLostException ex) {
			outcome = ReleaseOutcome.LOST;
			if (!ex.getOwner().equals(lease.owner())) {
				this.ledger.violation("the LockLostException of " + lease + " names owner " + ex.getOwner());
			}
			this.ledger.lostExceptions.put(lease.owner(), lease.fencingToken());
		}
		catch (LockUnavailableException ex) {
			outcome = ReleaseOutcome.UNANSWERED;
		}
		this.ledger.count("release." + outcome.name().toLowerCase(Locale.ROOT) + (last ? "" : "-reentry"));
		if (last) {
			this.ledger.lastReleases.put(lease.owner(), new ReleaseRecord(lease.fencingToken(), outcome));
		}
	}

	// final checks

	/** Invariant 1: accepted tokens never go backwards; a rejected write is always one of a lease that was lost. */
	private void checkFencedWrites() {
		for (String key : fencedKeys()) {
			long[] length = new long[1];
			long backwards = this.store.firstBackwardStep(key, length);
			if (backwards >= 0) {
				this.ledger.violation("the accepted tokens of " + key + " go backwards at write " + backwards);
			}
			long[] totals = this.store.totals(key);
			if (totals[0] != length[0]) {
				this.ledger.violation("the store counted " + totals[0] + " accepted writes of " + key + " but listed "
						+ length[0]);
			}
			this.ledger.add("store.accepted", totals[0]);
			this.ledger.add("store.rejected", totals[1]);
			this.ledger.add("store.lost-updates", totals[0] - totals[2]);
		}
		if (this.ledger.get("store.accepted") != this.ledger.get("writes.accepted")
				|| this.ledger.get("store.rejected") != this.ledger.get("writes.rejected")) {
			this.ledger.violation("the store's totals " + this.ledger.get("store.accepted") + "/"
					+ this.ledger.get("store.rejected") + " differ from the workers' " + this.ledger.get("writes.accepted")
					+ "/" + this.ledger.get("writes.rejected"));
		}
		for (Holder holder : this.ledger.rejectedWrites) {
			if (explain(holder, "rejected-writes") == null) {
				this.ledger.violation("a fenced write of " + holder + " was rejected, but its lease was never reported"
						+ " lost (last release: " + this.ledger.lastReleases.get(holder.owner()) + "): a newer holder"
						+ " wrote while it held the key undetected");
			}
		}
		for (ChaosLedger.Excess excess : this.ledger.excesses) {
			// with more holders inside than permits, at least that many more of them lost their permit (or were told
			// nothing is known of it): Redis never had more live holders than permits
			List<Holder> unexplained = excess.inside().stream().filter(holder -> explain(holder, "excesses") == null)
				.toList();
			if (unexplained.size() > excess.permits()) {
				this.ledger.violation(excess.inside().size() + " holders of the semaphore '" + excess.inside().get(0).key()
						+ "' of " + excess.permits() + " permits were in their critical sections at once, and only "
						+ (excess.inside().size() - unexplained.size()) + " of them were reported lost: " + excess.inside());
			}
		}
		for (Overlap overlap : this.ledger.overlaps) {
			Holder older = (overlap.first().token() <= overlap.second().token()) ? overlap.first() : overlap.second();
			if (explain(older, "overlaps") == null) {
				this.ledger.violation("two holders of '" + older.key() + "' were in their critical sections at once ("
						+ overlap.first() + " then " + overlap.second() + "), but the older lease was never reported"
						+ " lost (last release: " + this.ledger.lastReleases.get(older.owner()) + ")");
			}
		}
	}

	/**
	 * Why a holder may have lost the key: its loss was surfaced, or its release went unanswered (its holder was told
	 * the lease's state is unknown); null when nothing explains it.
	 */
	private String explain(Holder holder, String what) {
		LockLostEvent event = this.ledger.lostEvents.get(holder.owner());
		if (event != null && event.fencingToken() == holder.token()) {
			this.ledger.count(what + ".explained-by-loss");
			return "lost";
		}
		ReleaseRecord release = this.ledger.lastReleases.get(holder.owner());
		if (release != null && release.outcome() == ReleaseOutcome.UNANSWERED) {
			this.ledger.count(what + ".explained-by-unanswered-release");
			return "unanswered release";
		}
		return null;
	}

	/** Invariant 4: every loss event has its exception (and meter count), every exception its event. */
	private void checkLossesSurfaced() {
		for (LockLostEvent event : this.ledger.lostEvents.values()) {
			ReleaseRecord release = this.ledger.lastReleases.get(event.owner());
			if (release == null || release.outcome() != ReleaseOutcome.LOST || release.token() != event.fencingToken()) {
				this.ledger.violation("lease '" + event.key() + "' (owner " + event.owner() + ", token "
						+ event.fencingToken() + ") was reported lost (" + event.detection() + "), but its last release"
						+ " did not throw LockLostException: " + release);
			}
		}
		this.ledger.lostExceptions.forEach((owner, token) -> {
			LockLostEvent event = this.ledger.lostEvents.get(owner);
			if (event == null || event.fencingToken() != token) {
				this.ledger.violation("a release of owner " + owner + " (token " + token + ") threw LockLostException"
						+ " without a LockLostEvent: " + event);
			}
		});
		long metered = 0;
		for (SimpleMeterRegistry registry : this.registries) {
			for (Counter counter : registry.find(LockMetrics.LOST).tag(LockMetrics.NAME_TAG, LockRequest.DEFAULT_NAME)
				.counters()) {
				metered += (long) counter.count();
			}
		}
		this.ledger.add("lost.metered", metered);
		if (metered != this.ledger.lostEvents.size()) {
			this.ledger.violation("the " + LockMetrics.LOST + " meters count " + metered + " losses for "
					+ this.ledger.lostEvents.size() + " events");
		}
		for (LockLostEvent event : this.ledger.lostEvents.values()) {
			this.ledger.count("lost.detection." + LockMetrics.detectionTag(event.detection()));
		}
	}

	/** Invariant 3: poll the lock server itself until its keyspace is empty; returns how long it took. */
	private long awaitEmptyKeyspace(RedisServer lockServer, long quietAt) throws InterruptedException {
		long deadline = quietAt + TTL.plus(QUIESCENCE_MARGIN).toNanos();
		Object keys = null;
		while (true) {
			try {
				if (Long.valueOf(0).equals(lockServer.execute(Duration.ofSeconds(1), "DBSIZE"))) {
					return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - quietAt);
				}
				keys = lockServer.execute(Duration.ofSeconds(1), "KEYS", "*");
			}
			catch (RuntimeException ex) {
				keys = ex.toString();
			}
			if (System.nanoTime() - deadline > 0) {
				this.ledger.violation("the lock server's keyspace was not empty " + TTL.plus(QUIESCENCE_MARGIN)
						+ " after quiescence: " + keys);
				return -1;
			}
			TimeUnit.MILLISECONDS.sleep(20); // poll interval
		}
	}

	private String summary(long seed, Duration duration, Duration ran, long emptyAfterMillis) {
		ChaosLedger l = this.ledger;
		StringBuilder faults = new StringBuilder();
		long faultTotal = 0;
		for (ChaosFaults.Kind kind : ChaosFaults.Kind.values()) {
			long n = l.get("fault." + kind.label());
			faultTotal += n;
			faults.append(faults.isEmpty() ? "" : " ").append(kind.label()).append('=').append(n);
		}
		return "chaos " + LocalDate.now() + " seed=" + seed + " duration=" + duration + " ran=" + ran.toMillis() + "ms ("
				+ SERVICES + " services x " + WORKERS_PER_SERVICE + " workers, " + HOT_KEYS + " hot + " + SLOW_KEYS
				+ " slow keys + a semaphore of " + PERMITS + ", ttl " + TTL.toMillis() + "ms, command timeout " + COMMAND_TIMEOUT.toMillis() + "ms)"
				+ " | operations=" + l.get("operations") + ": hot acquired=" + l.get("acquire.acquired") + " not-acquired="
				+ l.get("acquire.not-acquired") + " unavailable=" + l.get("acquire.unavailable") + " (timeouts "
				+ l.get("acquire.unavailable-timeouts") + "); slow acquired=" + l.get("slow.acquired") + " busy="
				+ l.get("slow.not-acquired") + " unavailable=" + l.get("slow.unavailable") + "; re-entries="
				+ l.get("reentry.acquired") + " (a new lease instead " + l.get("reentry.new-lease") + ")"
				+ "; permits (" + PERMITS + ") acquired=" + l.get("permits.acquired") + " not-acquired="
				+ l.get("permits.not-acquired") + " unavailable=" + l.get("permits.unavailable") + " re-entries="
				+ l.get("reentry-permit.acquired") + ", most inside " + this.sections.get(permitsKey()).most
				+ ", excesses=" + l.excesses.size() + " (explained by a loss " + l.get("excesses.explained-by-loss")
				+ ", by an unanswered release " + l.get("excesses.explained-by-unanswered-release") + ")"
				+ " | fenced writes accepted=" + l.get("writes.accepted") + " rejected=" + l.get("writes.rejected")
				+ " (explained by a loss " + l.get("rejected-writes.explained-by-loss") + ", by an unanswered release "
				+ l.get("rejected-writes.explained-by-unanswered-release") + "); overlaps=" + l.overlaps.size()
				+ " (explained by a loss " + l.get("overlaps.explained-by-loss") + ", by an unanswered release "
				+ l.get("overlaps.explained-by-unanswered-release") + "); updates lost to overlaps="
				+ l.get("store.lost-updates")
				+ " | lost leases=" + l.lostEvents.size() + " (LockLostException " + l.lostExceptions.size() + ", metered "
				+ l.get("lost.metered") + ", by detection " + l.countsStartingWith("lost.detection.") + "); releases ok="
				+ l.get("release.released") + " lost=" + l.get("release.lost") + " unanswered="
				+ l.get("release.unanswered")
				+ " | faults=" + faultTotal + " (" + faults + "; on all services at once " + l.get("fault.on-all-services")
				+ ") | audit rounds=" + l.get("audit.rounds") + " (unreadable " + l.get("audit.rounds-unreadable")
				+ "; semaphores read " + l.get("audit.semaphores-read") + "), suspects missing=" + l.get("audit.suspects-missing") + " unknown=" + l.get("audit.suspects-unknown")
				+ " | keyspace empty " + emptyAfterMillis + "ms after quiescence"
				+ " | invariant violations=" + l.violations().size();
	}

	// plumbing

	private static String key(int index) {
		return "chaos-" + index;
	}

	private static String slowKey(int index) {
		return "chaos-slow-" + index;
	}

	private static String permitsKey() {
		return "chaos-permits";
	}

	/** The keys of exclusive leases, whose holders make fenced writes. */
	private static List<String> fencedKeys() {
		List<String> keys = new ArrayList<>();
		for (int k = 0; k < HOT_KEYS; k++) {
			keys.add(key(k));
		}
		for (int k = 0; k < SLOW_KEYS; k++) {
			keys.add(slowKey(k));
		}
		return keys;
	}

	private static List<String> allKeys() {
		List<String> keys = new ArrayList<>(fencedKeys());
		keys.add(permitsKey());
		return keys;
	}

	private static boolean isTimeout(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getClass().getSimpleName().contains("Timeout")) {
				return true;
			}
		}
		return false;
	}

	private static LettuceConnectionFactory factory(String host, int port, Duration timeout, ClientResources resources) {
		// reconnects within half a second and connects within one, so that a service is back soon after each fault
		ClientOptions options = ClientOptions.builder()
			.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder().commandTimeout(timeout).clientResources(resources)
					.clientOptions(options).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private Thread start(String name, Interruptible body) {
		Thread thread = new Thread(() -> {
			try {
				body.run();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (Throwable ex) {
				this.ledger.violation(name + " failed: " + ex);
				ex.printStackTrace();
			}
		}, name);
		thread.setDaemon(true);
		thread.start();
		return thread;
	}

	private void join(Thread thread, Duration timeout) throws InterruptedException {
		thread.join(timeout.toMillis());
		if (thread.isAlive()) {
			this.ledger.violation(thread.getName() + " did not stop within " + timeout);
			thread.interrupt();
		}
	}

	@FunctionalInterface
	private interface Interruptible {

		void run() throws Exception;

	}

	/**
	 * The holders of one key inside their critical sections, to count overlaps of an exclusive lease's holders, and
	 * excesses over a semaphore's permits (informational, explained later).
	 */
	private final class Section {

		/** How many may be inside at once: 1, or the semaphore's permits. */
		final int limit;

		private final List<Holder> inside = new ArrayList<>();

		/** The most holders inside at once. */
		volatile int most;

		Section(int limit) {
			this.limit = limit;
		}

		synchronized void enter(Holder holder) {
			if (this.limit == 1) {
				for (Holder other : this.inside) {
					LockChaosIntegrationTests.this.ledger.overlaps.add(new Overlap(other, holder));
				}
			}
			this.inside.add(holder);
			this.most = Math.max(this.most, this.inside.size());
			if (this.limit > 1 && this.inside.size() > this.limit) {
				LockChaosIntegrationTests.this.ledger.excesses
					.add(new ChaosLedger.Excess(List.copyOf(this.inside), this.limit));
			}
		}

		synchronized void exit(Holder holder) {
			this.inside.remove(holder);
		}

	}

}
