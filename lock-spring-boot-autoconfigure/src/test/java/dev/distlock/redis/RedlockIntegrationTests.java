package dev.distlock.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The Redlock engine over five local redis-server processes: mutual exclusion between engine instances, quorum
 * arithmetic with nodes down, a paused node, losses, waiting on release messages, re-entry and fencing tokens.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockIntegrationTests {

	/**
	 * How much longer than its bound one operation may take on a loaded 2-core machine, whose stalls last 1-2 s: a
	 * bound with this slack still tells "bounded by the node timeout or the wait" from "hangs" (issue 32).
	 */
	private static final Duration SLACK = Duration.ofMillis(2_500);

	/** How much longer than its bound the median of a few operations may take: one stall cannot move a median. */
	private static final Duration MEDIAN_SLACK = Duration.ofMillis(400);

	/**
	 * The lease time of leases that tests hold for a moment: a stall of the machine cannot outlast it (with 3 s, a
	 * stall of 2 s between two renewals would lose a lease, and its release would fail).
	 */
	private static final Duration TTL = Duration.ofSeconds(10);

	private RedlockNodesFixture nodes;

	private final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

	@BeforeEach
	void start() {
		this.nodes = new RedlockNodesFixture(5);
	}

	@AfterEach
	void stop() {
		this.nodes.servers.forEach(RedisServer::resume);
		this.nodes.close();
	}

	private RedlockLockService service() {
		return this.nodes.service(this.nodes.builder().listener(new LockListener() {
			@Override
			public void lost(LockLostEvent event) {
				RedlockIntegrationTests.this.lost.add(event);
			}
		}));
	}

	/**
	 * Release, accepting either documented outcome: confirmed by a quorum, or (a loaded machine's nodes answering
	 * later than the node timeout) short of one, when the hold counts as released and what the nodes still hold
	 * expires within its lease time.
	 */
	private static void releaseEvenShortOfAQuorum(Lease lease) {
		try {
			lease.release();
		}
		catch (LockUnavailableException ex) {
			assertThat(ex).hasMessageContaining("the hold counts as released");
		}
		assertThat(lease.isHeld()).isFalse();
	}

	private RedisServer server(int i) {
		return this.nodes.servers.get(i);
	}

	@Test
	void threeInstancesUnderContentionLoseNoUpdateAndTokensGrowWithEveryHolder() throws Exception {
		List<RedlockLockService> services = List.of(service(), service(), service());
		int threadsPerService = 2;
		int increments = 15;
		int[] counter = new int[1];
		List<Long> tokens = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(services.size() * threadsPerService);
		try {
			List<Future<?>> work = new ArrayList<>();
			for (RedlockLockService service : services) {
				for (int t = 0; t < threadsPerService; t++) {
					work.add(pool.submit(() -> {
						for (int i = 0; i < increments; i++) {
							try (Lease lease = service.acquire("counter", TTL, Duration.ofSeconds(60))) {
								int read;
								synchronized (counter) { // visibility only: the lease is what excludes
									read = counter[0];
									tokens.add(lease.fencingToken());
								}
								Thread.yield();
								synchronized (counter) {
									counter[0] = read + 1;
								}
							}
						}
						return null;
					}));
				}
			}
			for (Future<?> future : work) {
				future.get(100, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(counter[0]).isEqualTo(services.size() * threadsPerService * increments);
		for (int i = 1; i < tokens.size(); i++) {
			assertThat(tokens.get(i)).as("token of holder %d", i).isGreaterThan(tokens.get(i - 1));
		}
	}

	@Test
	void twoNodesDownStillAcquiresAndExcludes() {
		RedlockLockService first = service();
		RedlockLockService second = service();
		server(0).stop();
		server(3).stop();
		Lease lease = first.acquire("two-down", TTL, Duration.ofSeconds(5));
		assertThat(second.tryAcquire("two-down", TTL, Duration.ZERO)).isEmpty();
		assertThat(first.holder("two-down")).hasValueSatisfying(h -> assertThat(h.fencingToken()).isEqualTo(lease.fencingToken()));
		lease.release();
		try (Lease next = second.acquire("two-down", TTL, Duration.ofSeconds(5))) {
			assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		}
	}

	@Test
	void fairAndReadWriteLocksAreRefusedNamingTheKey() {
		RedlockLockService service = service();
		for (LockMode mode : List.of(LockMode.FAIR, LockMode.READ, LockMode.WRITE)) {
			LockRequest request = LockRequest.of("modes", Duration.ofSeconds(3), Duration.ZERO).withMode(mode);
			assertThatExceptionOfType(UnsupportedOperationException.class)
					.isThrownBy(() -> service.tryAcquire(request))
					.withMessage("Lock 'modes': " + mode.name().toLowerCase(java.util.Locale.ROOT)
							+ " locks are not supported by the Redlock engine");
		}
		assertThat(service.activeLeaseCount()).isZero();
	}

	@Test
	void permitsAreRefusedNamingTheKeyAndTheReason() {
		RedlockLockService service = service();
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> service.tryAcquire(LockRequest.of("partner-api", Duration.ofSeconds(3), Duration.ZERO)
				.permits(2)))
			.withMessageStartingWith("Lock 'partner-api': permits locks are not supported by the Redlock engine: ")
			.withMessageContaining("does not bound the holders by the number of permits");
		assertThat(service.activeLeaseCount()).isZero();
		assertThat(server(0).execute("KEYS", "*")).asList().isEmpty();
	}

	@Test
	void threeNodesDownFailsCleanlyWithinTheWait() {
		RedlockLockService service = service();
		server(0).stop();
		server(2).stop();
		server(4).stop();
		Duration wait = Duration.ofMillis(600);
		long start = System.nanoTime();
		assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("three-down", TTL, wait))
				.withMessageContaining("of 5 nodes answered");
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(took).isLessThan(wait.plus(RedlockNodesFixture.NODE_TIMEOUT).plus(SLACK));
		assertThat(service.activeLeaseCount()).isZero();
	}

	@Test
	void aPausedNodeBoundsEachOperationByThePerNodeTimeout() {
		RedlockLockService service = service();
		RedlockLockService other = service();
		server(1).pause();
		Duration bound = RedlockNodesFixture.NODE_TIMEOUT.plus(SLACK);
		List<Duration> acquires = new ArrayList<>();
		List<Duration> attempts = new ArrayList<>();
		List<Duration> releases = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			long start = System.nanoTime();
			Lease lease = service.acquire("paused", TTL, Duration.ofSeconds(30));
			acquires.add(Duration.ofNanos(System.nanoTime() - start));
			start = System.nanoTime();
			assertThat(other.tryAcquire("paused", TTL, Duration.ZERO)).isEmpty();
			attempts.add(Duration.ofNanos(System.nanoTime() - start));
			start = System.nanoTime();
			lease.release();
			releases.add(Duration.ofNanos(System.nanoTime() - start));
		}
		// each within its bound (the acquire's wait is 30 s: one within the bound waited for no second attempt), and the
		// median of each within the node timeout and a little
		for (List<Duration> took : List.of(acquires, attempts, releases)) {
			assertThat(took).as("acquire, failed attempt, release: %s", took).allSatisfy(t -> assertThat(t).isLessThan(bound));
			assertThat(took.stream().sorted().toList().get(1)).as("median of %s", took)
				.isLessThan(RedlockNodesFixture.NODE_TIMEOUT.plus(MEDIAN_SLACK));
		}
	}

	@Test
	void aLeaseWhoseRenewalsLoseTheQuorumIsLost() {
		List<Object> published = new CopyOnWriteArrayList<>();
		RedlockLockService service = this.nodes.service(this.nodes.builder().eventPublisher(published::add)
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					RedlockIntegrationTests.this.lost.add(event);
				}
			}));
		Duration ttl = Duration.ofMillis(1500);
		Lease lease = service.acquire("losing", ttl, Duration.ofSeconds(5));
		server(0).stop();
		server(1).stop();
		server(2).stop();
		// lost at its ttl, or at the first renewal after it when a loaded machine delays that (room for stalls)
		await().atMost(ttl.plusSeconds(15)).until(lease::isLost);
		// the listeners hear of the loss just after the lease says it is lost
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.lost.isEmpty());
		assertThat(this.lost).singleElement().satisfies(event -> {
			assertThat(event.key()).isEqualTo("losing");
			assertThat(event.fencingToken()).isEqualTo(lease.fencingToken());
		});
		assertThat(this.lost.get(0).detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FAILED);
		await().atMost(Duration.ofSeconds(5)).until(() -> published.equals(List.of(this.lost.get(0))));
		assertThat(service.lostLeaseCount()).isEqualTo(1);
		assertThat(service.renewalStatus().isFailing()).isFalse(); // a lost lease is no longer renewed
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(service.lostLeaseCount()).isZero();
	}

	@Test
	void aWaiterIsWokenByTheReleaseMessage() throws Exception {
		RedlockLockService holder = service();
		RedlockLockService waiter = service();
		Duration ttl = Duration.ofSeconds(20);
		Lease lease = holder.acquire("wake", ttl, Duration.ofSeconds(5));
		CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
			try (Lease next = waiter.acquire("wake", ttl, Duration.ofSeconds(30))) {
				return System.nanoTime();
			}
		});
		// once every node has confirmed the waiter's subscription, it parks until a message or the holder's ttl
		String channel = RedisLockService.channel(holder.redisKey("wake"));
		await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1
				&& this.nodes.servers.stream().allMatch(s -> subscribers(s, channel) >= 1));
		long releasedAt = System.nanoTime();
		lease.release();
		long handOff = acquiredAt.get(20, TimeUnit.SECONDS) - releasedAt;
		// the holder's ttl was 20 s: only a message wakes the waiter sooner (room for a loaded machine's stalls)
		assertThat(Duration.ofNanos(handOff)).isLessThan(Duration.ofSeconds(10));
	}

	private static long subscribers(RedisServer server, String channel) {
		Object reply = server.execute("PUBSUB", "NUMSUB", channel);
		List<?> list = (List<?>) reply;
		return (list != null && list.size() == 2) ? Long.parseLong(String.valueOf(list.get(1))) : 0;
	}

	@Test
	void theHoldingThreadReentersWithTheSameTokenOnEveryNode() {
		RedlockLockService service = service();
		RedlockLockService other = service();
		Lease outer = service.acquire("reentrant", TTL, Duration.ofSeconds(5));
		Lease inner = service.acquire("reentrant", TTL, Duration.ZERO);
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(inner.owner()).isEqualTo(outer.owner());
		// every node that granted the lease counts two holds of its one owner (a quorum at least)
		long twice = this.nodes.servers.stream()
				.filter(s -> "2".equals(String.valueOf(s.execute("HGET", service.redisKey("reentrant"), outer.owner()))))
				.count();
		assertThat(twice).isGreaterThanOrEqualTo(3);
		assertThat(service.activeLeases()).singleElement().satisfies(s -> assertThat(s.holdCount()).isEqualTo(2));
		inner.release();
		assertThat(other.tryAcquire("reentrant", TTL, Duration.ZERO)).isEmpty();
		outer.release();
		Optional<Lease> next = other.tryAcquire("reentrant", TTL, Duration.ZERO);
		assertThat(next).isPresent();
		next.get().release();
	}

	@Test
	void fencingTokensGrowWithEveryNewHolder() {
		List<RedlockLockService> services = List.of(service(), service());
		long last = 0;
		for (int i = 0; i < 10; i++) {
			try (Lease lease = services.get(i % 2).acquire("fenced", TTL, Duration.ofSeconds(5))) {
				assertThat(lease.fencingToken()).isGreaterThan(last);
				last = lease.fencingToken();
			}
		}
	}

	@Test
	void aNodeRestartedWithoutDataAtOnceLetsASecondHolderIn() {
		// the risk the delayed-restart rule prevents: the first holder holds on exactly a quorum (0, 1, 2)
		RedlockLockService first = service();
		server(3).stop();
		server(4).stop();
		Lease lease = first.acquire("restart", Duration.ofSeconds(20), Duration.ofSeconds(5));
		server(3).restart();
		server(4).restart();
		server(0).restart(); // no persistence: it comes back without the lease, at once
		RedlockLockService second = service(); // another instance, connected to the nodes as they are now
		Optional<Lease> intruder = second.tryAcquire("restart", Duration.ofSeconds(20), Duration.ofSeconds(5));
		assertThat(intruder).as("a second holder on nodes 0, 3, 4").isPresent();
		assertThat(lease.isHeld()).as("while the first still believes it holds").isTrue();
		intruder.get().release();
	}

	@Test
	void aNodeRestartedAfterTheMaxTtlLetsNoSecondHolderInWhileTheFirstHolds() {
		RedlockLockService first = service();
		server(3).stop();
		server(4).stop();
		Duration ttl = Duration.ofMillis(1500);
		Lease lease = first.acquire("delayed", ttl, Duration.ofSeconds(5));
		server(3).restart();
		server(4).restart();
		server(0).stop();
		// the delayed-restart rule: node 0 stays down for the max ttl, so the first holder's renewals miss the quorum
		// and it learns it lost the lease before node 0 can grant it to anyone else (the deadline: room for stalls)
		await().atMost(ttl.plusSeconds(15)).until(lease::isLost);
		server(0).restart();
		RedlockLockService second = service();
		try (Lease next = second.acquire("delayed", TTL, Duration.ofSeconds(30))) {
			assertThat(lease.isHeld()).isFalse();
			assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		}
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
	}

	@Test
	void operatorsSeeLeasesAndWaitersAndCanForceARelease() throws Exception {
		RedlockLockService holder = service();
		RedlockLockService waiter = service();
		Lease lease = holder.acquire("stuck", Duration.ofSeconds(20), Duration.ofSeconds(5));
		assertThat(holder.activeLeases()).singleElement().satisfies(s -> {
			assertThat(s.key()).isEqualTo("stuck");
			assertThat(s.fencingToken()).isEqualTo(lease.fencingToken());
			assertThat(s.lost()).isFalse();
		});
		assertThat(holder.activityByName().heldLeases("default")).isEqualTo(1);
		CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
			Lease taken = waiter.acquire("stuck", Duration.ofSeconds(20), Duration.ofSeconds(30));
			releaseEvenShortOfAQuorum(taken);
			return taken.fencingToken();
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
		assertThat(waiter.activityByName().waitingThreads("default")).isEqualTo(1);
		assertThat(waiter.forceRelease("stuck")).hasValueSatisfying(released -> {
			assertThat(released.owner()).isEqualTo(lease.owner());
			// the greatest token of the nodes that had the lease: a node whose grant came after the quorum was
			// counted issued a later (greater) one than those the lease's token was taken from
			assertThat(released.fencingToken()).isGreaterThanOrEqualTo(lease.fencingToken());
		});
		assertThat(next.get(10, TimeUnit.SECONDS)).isGreaterThan(lease.fencingToken());
		assertThat(lease.isOwned()).isFalse();
		assertThat(lease.isLost()).isTrue();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(holder.activeLeaseCount()).isZero();
		assertThat(holder.renewalStatus().isFailing()).isFalse();
	}

	@Test
	void withARestartQuarantineANodeRestartedAtOnceIsNotCountedSoNoSecondHolderGetsIn() {
		// the first holder's lease lives 6 s, renewed every 600 ms: no stall of a loaded machine loses it by the clock
		// before its renewals find it gone (with 2 s, renewed every 667 ms, one could); the quarantine is the max ttl
		Duration quarantine = Duration.ofSeconds(6);
		Duration ttl = Duration.ofSeconds(6);
		RedlockLockService first = this.nodes.service(this.nodes.builder().restartQuarantine(quarantine)
			.renewalRatio(0.1)
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					RedlockIntegrationTests.this.lost.add(event);
				}
			}));
		server(3).stop();
		server(4).stop();
		// every node started with this test: none counts before it has been up for the quarantine
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> first.tryAcquire("quarantined", ttl, Duration.ZERO));
		long up = quarantine.toSeconds();
		await().atMost(quarantine.plusSeconds(20)).until(() -> uptimeSeconds(server(0)) >= up
				&& uptimeSeconds(server(1)) >= up && uptimeSeconds(server(2)) >= up);
		Lease lease = first.acquire("quarantined", ttl, Duration.ofSeconds(5));
		server(3).restart();
		server(4).restart();
		server(0).restart(); // without its data, at once: the risk of aNodeRestartedWithoutDataAtOnce...
		RedlockLockService second = this.nodes.service(this.nodes.builder().restartQuarantine(quarantine));
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> second.tryAcquire("quarantined", Duration.ofSeconds(2), Duration.ofMillis(500)));
		// the first holder's renewals find its lease gone from node 0: with 3 and 4 it never had, no quorum can renew
		await().atMost(Duration.ofSeconds(30)).until(lease::isLost);
		// the listeners hear of the loss just after the lease says it is lost
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.lost.isEmpty());
		assertThat(this.lost).singleElement()
			.satisfies(event -> assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE));
		// once the restarted nodes have been up for the quarantine, the lock is granted again
		try (Lease next = second.acquire("quarantined", Duration.ofSeconds(2), quarantine.plusSeconds(20))) {
			assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		}
	}

	private static long uptimeSeconds(RedisServer server) {
		String info = String.valueOf(server.execute("INFO", "server"));
		return info.lines().filter(line -> line.startsWith("uptime_in_seconds:"))
			.mapToLong(line -> Long.parseLong(line.substring("uptime_in_seconds:".length()).trim()))
			.findFirst().orElse(0);
	}

	@Test
	void extensionsRenewalsAndOwnershipChecksCountOnAQuorum() {
		RedlockLockService service = service();
		// lease times that leave 4 s or more for the calls between the checks: room for a loaded machine's stalls
		Lease lease = service.tryAcquire(LockRequest.of("extended", Duration.ofSeconds(10), Duration.ofSeconds(5))
			.withFixedLease()).orElseThrow();
		Instant before = lease.validUntil();
		lease.extend(Duration.ofSeconds(10));
		assertThat(lease.validUntil()).isAfter(before.plusMillis(9500));
		assertThat(pttlOnAQuorum(service.redisKey("extended"))).isGreaterThan(14_000);
		lease.extend(Duration.ofSeconds(3), ExtendMode.REPLACE);
		assertThat(lease.validUntil()).isBefore(Instant.now().plusSeconds(3));
		assertThat(pttlOnAQuorum(service.redisKey("extended"))).isLessThanOrEqualTo(3000);
		lease.renew();
		assertThat(pttlOnAQuorum(service.redisKey("extended"))).isGreaterThan(3000);
		assertThat(lease.isOwned()).isTrue();
		server(0).stop();
		server(1).stop();
		server(2).stop();
		assertThatExceptionOfType(LockUnavailableException.class).isThrownBy(lease::isOwned)
			.withMessageContaining("of 5 nodes confirmed it (a quorum is 3)");
		assertThatExceptionOfType(LockUnavailableException.class).isThrownBy(() -> lease.extend(Duration.ofSeconds(1)));
		assertThat(lease.isLost()).isFalse();
		// a fixed lease that outlives its validity without a quorum's extension is lost by the clock
		await().atMost(Duration.ofSeconds(30)).until(lease::isLost);
		// the listeners hear of the loss just after the lease says it is lost
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.lost.isEmpty());
		assertThat(this.lost).singleElement()
			.satisfies(event -> assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.EXPIRED));
	}

	/** The remaining ttl in ms that a quorum (3) of the nodes has at least. */
	private long pttlOnAQuorum(String redisKey) {
		List<Long> pttls = new ArrayList<>(this.nodes.servers.stream()
			.map(s -> Long.parseLong(String.valueOf(s.execute("PTTL", redisKey))))
			.sorted(java.util.Comparator.reverseOrder())
			.toList());
		return pttls.get(2);
	}

	@Test
	void aNodeSlowerThanTheQuorumStillHoldsAndRenewsTheLease() {
		try (FaultProxy slow = FaultProxy.to(server(4))) {
			List<RedisConnectionFactory> factories = new ArrayList<>(this.nodes.factories().subList(0, 4));
			factories.add(this.nodes.factory(slow.host(), slow.port(), Duration.ofSeconds(6)));
			RedlockLockService service = this.nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(Duration.ofSeconds(3)));
			// its grant comes 2 s after the others' quorum, within the node timeout: an acquisition that returns sooner
			// did not wait for it, with room for a loaded machine's stalls (a 450 ms bound was not)
			slow.latency(Duration.ofSeconds(1));
			Duration ttl = Duration.ofSeconds(9); // at least three node timeouts
			long start = System.nanoTime();
			Lease lease = service.acquire("slow-node", ttl, Duration.ofSeconds(5));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
			String redisKey = service.redisKey("slow-node");
			await().atMost(Duration.ofSeconds(20)).until(() -> server(4).execute("HGET", redisKey, lease.owner()) != null);
			long granted = (Long) server(4).execute("PEXPIRETIME", redisKey);
			// the slow node's late grant was adopted and is renewed there too: it expires later than it was granted
			await().atMost(ttl.plusSeconds(20))
				.until(() -> (Long) server(4).execute("PEXPIRETIME", redisKey) > granted);
			assertThat(lease.isHeld()).isTrue();
			assertThat(server(4).execute("HGET", redisKey, lease.owner())).isEqualTo("1");
			lease.release();
			await().atMost(Duration.ofSeconds(20)).until(() -> server(4).execute("EXISTS", redisKey).equals(0L));
		}
	}

	/**
	 * A failed attempt leaves no grant behind on a node whose answer comes late, even when the attempt reaches that
	 * node after the attempt's discard did: here Redis on the two slow nodes lost the acquire script (so the engine
	 * sends it once more when told so, a round trip later) but has the discard script, which runs at once. The late
	 * answer brings a second discard. A grant left behind would block the key for its whole lease time, with no release
	 * message to wake a waiter.
	 */
	@Test
	void aFailedAttemptThatReachesANodeAfterItsDiscardIsDiscardedThereWhenItsAnswerComes() {
		try (FaultProxy slowA = FaultProxy.to(server(1)); FaultProxy slowB = FaultProxy.to(server(2))) {
			List<RedisConnectionFactory> factories = List.of(this.nodes.factories().get(0),
					this.nodes.factory(slowA.host(), slowA.port(), Duration.ofSeconds(5)),
					this.nodes.factory(slowB.host(), slowB.port(), Duration.ofSeconds(5)));
			RedlockLockService service = this.nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(Duration.ofMillis(100)));
			for (int i = 1; i <= 2; i++) {
				server(i).execute("SCRIPT", "FLUSH");
				server(i).execute("SCRIPT", "LOAD", ReadWriteScripts.DISCARD.getScriptAsString());
			}
			slowA.latency(Duration.ofMillis(150));
			slowB.latency(Duration.ofMillis(150));
			String redisKey = service.redisKey("late");
			Duration ttl = Duration.ofSeconds(30);

			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("late", ttl, Duration.ZERO))
				.withMessageContaining("of 3 nodes answered (a quorum is 2)");

			// the acquire script did run on the slow nodes (EVAL after NOSCRIPT), and nothing of it is left anywhere
			// long before its lease time
			await().atMost(Duration.ofSeconds(10)).until(() -> evalCalls(server(1)) > 0 && evalCalls(server(2)) > 0);
			await().atMost(Duration.ofSeconds(20)).until(() -> List.of(0, 1, 2).stream()
				.allMatch((i) -> Long.valueOf(0).equals(server(i).execute("EXISTS", redisKey))));
			slowA.heal();
			slowB.heal();
			Lease lease = this.nodes.service(this.nodes.builder()).acquire("late", ttl, Duration.ofSeconds(5));
			lease.release();
		}
	}

	/**
	 * A failed attempt's discards go to a node through its reconciler (issue 27), and the node may run them late and
	 * more than once: the node is partitioned (its proxy holds every byte), so the attempt's acquire, its discard and
	 * the reconciler's re-sends all time out unanswered and run only when the partition heals, after the next holder's
	 * acquire on that node. Each discard names the failed attempt's owner id, so however late and however often it runs,
	 * it removes only that attempt's grant: the next holder's lease is kept, its release ends it everywhere, and nothing
	 * of the failed attempt is left on the node.
	 */
	@Test
	void aFailedAttemptsDiscardsThatRunLateAndTwiceOnAPartitionedNodeLeaveTheNextHoldersLeaseAlone() {
		try (FaultProxy partitioned = FaultProxy.to(server(0))) {
			List<RedisConnectionFactory> factories = List.of(
					this.nodes.factory(partitioned.host(), partitioned.port(), Duration.ofSeconds(5)),
					this.nodes.factories().get(1), this.nodes.factories().get(2));
			List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
			RedlockLockService service = this.nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(Duration.ofMillis(200))
				.listener(new LockListener() {
					@Override
					public void lost(LockLostEvent event) {
						lost.add(event);
					}
				}));
			String redisKey = service.redisKey("partitioned-discard");
			for (int i = 1; i <= 2; i++) { // another holder on two of the three nodes
				server(i).execute("HSET", redisKey, "someone-else", "1");
				server(i).execute("PEXPIRE", redisKey, "30000");
			}
			long scriptsBefore = scriptCalls(server(0));
			partitioned.blackhole();

			Optional<Lease> failed;
			try {
				failed = service.tryAcquire("partitioned-discard", TTL, Duration.ZERO);
			}
			catch (LockUnavailableException ex) {
				failed = Optional.empty();
			}
			assertThat(failed).as("two nodes held by another, the third unanswered").isEmpty();
			for (int i = 1; i <= 2; i++) {
				server(i).execute("DEL", redisKey);
			}
			// the next holder gets its quorum on the two nodes that answer; its acquire on the partitioned node waits
			// behind the failed attempt's acquire and discards
			Lease next = service.acquire("partitioned-discard", TTL, Duration.ofSeconds(10));
			partitioned.heal();

			// everything held back has run on the node (the failed attempt's acquire, at least one of its discards, the
			// next holder's acquire), and the failed attempt's grant is gone, whatever ran after it
			await().atMost(Duration.ofSeconds(20)).until(() -> scriptCalls(server(0)) - scriptsBefore >= 3);
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				List<?> fields = (List<?>) server(0).execute("HKEYS", redisKey);
				assertThat(fields).as("fields of the lease on the healed node")
					.allSatisfy((field) -> assertThat(String.valueOf(field)).satisfiesAnyOf(
							(name) -> assertThat(name).startsWith("~"), (name) -> assertThat(name).isEqualTo(next.owner())));
			});
			for (int i = 1; i <= 2; i++) {
				assertThat(server(i).execute("HGET", redisKey, next.owner())).as("the next holder on node %s", i)
					.isEqualTo("1");
			}
			assertThat(next.isOwned()).isTrue();
			next.release();
			assertThat(lost).as("losses announced").isEmpty();
			await().atMost(Duration.ofSeconds(20)).until(() -> List.of(0, 1, 2).stream()
				.allMatch((i) -> Long.valueOf(0).equals(server(i).execute("EXISTS", redisKey))));
		}
	}

	/** The script calls ({@code EVALSHA} and {@code EVAL}) {@code server} ran so far. */
	private static long scriptCalls(RedisServer server) {
		String stats = String.valueOf(server.execute("INFO", "commandstats"));
		return stats.lines().filter((line) -> line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
			.mapToLong((line) -> Long.parseLong(line.replaceAll("^cmdstat_eval(sha)?:calls=(\\d+),.*", "$2"))).sum();
	}

	private static long evalCalls(RedisServer server) {
		String stats = String.valueOf(server.execute("INFO", "commandstats"));
		return stats.lines().filter((line) -> line.startsWith("cmdstat_eval:")).findFirst()
			.map((line) -> Long.parseLong(line.replaceAll("^cmdstat_eval:calls=(\\d+),.*", "$1"))).orElse(0L);
	}

	@Test
	void rejectsAnEvenNumberOfNodesAndATtlBelowThreeNodeTimeouts() {
		assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> RedlockLockService.builder(this.nodes.factories().subList(0, 4)))
				.withMessageContaining("odd number of at least 3");
		RedlockLockService service = service();
		assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> service.tryAcquire("short", Duration.ofMillis(500), Duration.ZERO))
				.withMessageContaining("'ttl' of lock 'short'");
	}

	@Test
	void aTtlOrExtensionLongerThanAYearIsRejectedNamingTheKey() {
		RedlockLockService service = service();
		assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> service.tryAcquire("year-long", Duration.ofDays(366), Duration.ZERO))
				.withMessage("'ttl' of lock 'year-long' must be at most 365 days, but was PT8784H");
		try (Lease lease = service.acquire("year-long", Duration.ofSeconds(30), Duration.ZERO)) {
			assertThatExceptionOfType(IllegalArgumentException.class)
					.isThrownBy(() -> lease.extend(Duration.ofDays(366)))
					.withMessage("Lease extension must be at most 365 days, but was PT8784H for lock 'year-long'");
			assertThatExceptionOfType(IllegalArgumentException.class)
					.isThrownBy(() -> lease.extend(Duration.ofDays(366), ExtendMode.REPLACE))
					.withMessageContaining("at most 365 days").withMessageContaining("'year-long'");
			assertThat(lease.isOwned()).isTrue();
		}
	}

}
