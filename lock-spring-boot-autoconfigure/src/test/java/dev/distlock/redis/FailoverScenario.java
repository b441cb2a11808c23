package dev.distlock.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.test.redis.RedisServer;
import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * One failover with leases held and a waiter waiting, shared by the Cluster and the Sentinel tests: a topology only says
 * where a key lives, which node replicates it, how to kill a master and how to await its successor.
 */
final class FailoverScenario {

	/** Longer than a failover on a loaded machine (node timeout 2 s, then the election), so a replicated lease survives. */
	static final Duration TTL = Duration.ofSeconds(15);

	interface Topology {

		RedisServer masterFor(String redisKey);

		RedisServer replicaOf(RedisServer master);

		void kill(RedisServer master);

		RedisServer awaitPromotion(RedisServer killed);

	}

	/** The losses a holder's listener saw (its renewal callbacks name the lease's name, not its key). */
	static final class Recorder implements LockListener {

		final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

		@Override
		public void lost(LockLostEvent event) {
			this.lost.add(event);
		}

	}

	/** When {@code service} last renewed the lease of {@code key}, or null if never. */
	static @Nullable Instant lastRenewal(RedisLockService service, String key) {
		return service.activeLeases().stream().filter(snapshot -> snapshot.key().equals(key)).findFirst()
			.map(LeaseSnapshot::lastRenewal).orElse(null);
	}

	static boolean renewedAfter(RedisLockService service, String key, Instant instant) {
		Instant last = lastRenewal(service, key);
		return last != null && last.isAfter(instant);
	}

	/** A lock name, unique to this run, whose Redis key is on {@code master} (or, if {@code on} is false, is not). */
	static String nameOn(RedisLockService service, Topology topology, RedisServer master, boolean on, String prefix,
			Set<String> taken) {
		for (int i = 0;; i++) {
			String name = prefix + "-" + i;
			if (!taken.contains(name) && topology.masterFor(service.redisKey(name)).equals(master) == on) {
				taken.add(name);
				return name;
			}
		}
	}

	/** Waits until {@code replica} has applied everything {@code master} has written so far. */
	static void awaitReplicated(RedisServer master, RedisServer replica) {
		long offset = infoField(master, "master_repl_offset");
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
			.until(() -> infoField(replica, "slave_repl_offset") >= offset);
	}

	static long infoField(RedisServer server, String field) {
		String info = (String) server.execute("INFO", "replication");
		for (String line : info.split("\r\n")) {
			if (line.startsWith(field + ":")) {
				return Long.parseLong(line.substring(field.length() + 1).trim());
			}
		}
		throw new IllegalStateException(field + " not in INFO replication of " + server);
	}

	/**
	 * Kills {@code master} with a lease on it that its replica never got: the replica is stopped (SIGSTOP) so that it
	 * cannot reconnect, the master drops its replication link ({@code CLIENT KILL TYPE replica}), the lease is written
	 * (into the master's backlog only), and the master dies before the replica, resumed, could catch up. (A one-byte
	 * output limit for replicas was tried first: the write still reached the replica.)
	 *
	 * @return the lease the replica lacks
	 */
	static Lease killWithAnUnreplicatedLease(RedisLockService holder, String name, RedisServer master, RedisServer replica,
			Topology topology) {
		replica.pause();
		try {
			assertThat(master.execute("CLIENT", "KILL", "TYPE", "replica")).as("replication links dropped").isEqualTo(1L);
			Lease lease = holder.acquire(name, TTL, Duration.ZERO);
			topology.kill(master);
			return lease;
		}
		finally {
			replica.resume();
		}
	}

	/**
	 * Seconds from {@code killedAt} until {@code prober} acquires {@code name} (on the failed shard), trying every 50 ms
	 * with a wait of zero, or empty if not within {@code deadline}.
	 */
	static Optional<Double> secondsToFirstAcquisition(RedisLockService prober, String name, long killedAt, Duration deadline) {
		AtomicReference<Lease> acquired = new AtomicReference<>();
		try {
			await().atMost(deadline).pollInterval(Duration.ofMillis(50)).until(() -> {
				try {
					prober.tryAcquire(name, TTL, Duration.ZERO).ifPresent(acquired::set);
				}
				catch (RuntimeException ex) {
					// the shard is not served yet (or the client does not know where it is)
				}
				return acquired.get() != null;
			});
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			return Optional.empty();
		}
		double seconds = (System.nanoTime() - killedAt) / 1e9;
		acquired.get().release();
		return Optional.of(seconds);
	}

	/** Handoffs of one key from holder to a blocked waiter; the release-to-acquired latencies in ms, sorted. */
	static List<Double> handoffLatencies(RedisLockService holder, RedisLockService waiter, String name, int rounds)
			throws Exception {
		ExecutorService thread = Executors.newSingleThreadExecutor();
		List<Double> latencies = new ArrayList<>();
		try {
			for (int i = 0; i < rounds; i++) {
				Lease held = holder.acquire(name, TTL, Duration.ofSeconds(10));
				AtomicReference<Long> acquiredAt = new AtomicReference<>();
				Future<?> waiting = thread.submit(() -> {
					Lease lease = waiter.acquire(name, TTL, Duration.ofSeconds(20));
					acquiredAt.set(System.nanoTime());
					lease.release();
				});
				await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
				long releasedAt = System.nanoTime();
				held.release();
				waiting.get(20, TimeUnit.SECONDS);
				latencies.add((acquiredAt.get() - releasedAt) / 1e6);
			}
		}
		finally {
			thread.shutdownNow();
		}
		Collections.sort(latencies);
		return latencies;
	}

	static double percentile(List<Double> sorted, double p) {
		return sorted.get((int) Math.ceil(sorted.size() * p) - 1);
	}

	/**
	 * Leases on healthy shards (if {@code healthyMasters} is not empty), a replicated and an unreplicated lease on the
	 * victim's shard and a waiter for the replicated one; kills the victim and checks what each must become.
	 *
	 * @return seconds from the kill to the first successful acquisition on the failed shard
	 */
	static double run(LockTestSupport support, Topology topology, RedisServer victim, List<RedisServer> healthyMasters,
			Function<Double, String> label) throws Exception {
		Recorder recorder = new Recorder();
		RedisLockService holder = support.service(RedisLockService.builder(support.connectionFactory()).listener(recorder));
		RedisLockService waiterService = support.service();
		RedisLockService prober = support.service();
		Set<String> taken = ConcurrentHashMap.newKeySet();
		RedisServer replica = topology.replicaOf(victim);

		List<Lease> healthy = new ArrayList<>();
		for (RedisServer master : healthyMasters) {
			for (int i = 0; i < 2; i++) {
				healthy.add(holder.acquire(nameOn(holder, topology, master, true, "healthy", taken), TTL, Duration.ZERO));
			}
		}
		String replicatedName = nameOn(holder, topology, victim, true, "replicated", taken);
		String contendedName = nameOn(holder, topology, victim, true, "contended", taken);
		String unreplicatedName = nameOn(holder, topology, victim, true, "unreplicated", taken);
		String probeName = nameOn(holder, topology, victim, true, "probe", taken);
		Lease replicated = holder.acquire(replicatedName, TTL, Duration.ZERO);
		Lease contended = holder.acquire(contendedName, TTL, Duration.ZERO);
		// the prober and the waiter have connected to the victim before it dies, as a running application would have
		prober.acquire(probeName, TTL, Duration.ZERO).release();

		ExecutorService waiterThread = Executors.newSingleThreadExecutor();
		try {
			Future<Lease> waiting = waiterThread.submit(() -> waiterService.acquire(contendedName, TTL, Duration.ofSeconds(90)));
			await().atMost(Duration.ofSeconds(10)).until(() -> waiterService.waitingThreads() == 1);
			awaitReplicated(victim, replica);

			Lease unreplicated = killWithAnUnreplicatedLease(holder, unreplicatedName, victim, replica, topology);
			long killedAt = System.nanoTime();
			RedisServer promoted = topology.awaitPromotion(victim);
			double promotedAfter = (System.nanoTime() - killedAt) / 1e9;
			Optional<Double> firstAcquisition = secondsToFirstAcquisition(prober, probeName, killedAt, Duration.ofSeconds(60));
			System.out.printf("failover (%s): promoted after %.1f s, first acquisition on the failed shard after %s%n",
					label.apply(promotedAfter), promotedAfter,
					firstAcquisition.map(s -> String.format("%.1f s", s)).orElse("more than 60 s"));
			assertThat(firstAcquisition).as("an acquisition on the failed shard within 60 s of the kill").isPresent();
			assertThat(promoted.execute("HGET", holder.redisKey(replicatedName), replicated.owner())).isEqualTo("1");
			assertThat(promoted.execute("EXISTS", holder.redisKey(unreplicatedName))).isEqualTo(0L);

			// the lease the replica lacked is reported lost, once, and the next holder's token is greater
			await().atMost(TTL.plusSeconds(10)).until(unreplicated::isLost);
			// the listeners hear of the loss just after the lease says it is lost
			await().atMost(Duration.ofSeconds(10)).until(() -> !recorder.lost.isEmpty());
			assertThat(recorder.lost).singleElement().satisfies(event -> {
				assertThat(event.key()).isEqualTo(unreplicatedName);
				assertThat(event.fencingToken()).isEqualTo(unreplicated.fencingToken());
				assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
			});
			assertThatExceptionOfType(LockLostException.class).isThrownBy(unreplicated::release);
			try (Lease next = prober.acquire(unreplicatedName, TTL, Duration.ofSeconds(10))) {
				assertThat(next.fencingToken()).isGreaterThan(unreplicated.fencingToken());
			}

			// the replicated lease is renewed on the new master
			Instant promotedAt = Instant.now(); // later than the promotion: stricter
			await().atMost(TTL).until(() -> renewedAfter(holder, replicatedName, promotedAt));
			assertThat(replicated.isHeld()).isTrue();
			Long pttl = (Long) promoted.execute("PTTL", holder.redisKey(replicatedName));
			assertThat(pttl).isPositive();

			// leases on the surviving shards are renewed after the failover, still held, never reported lost
			for (Lease lease : healthy) {
				await().atMost(TTL).until(() -> renewedAfter(holder, lease.key(), promotedAt));
				assertThat(lease.isHeld()).as(lease.key()).isTrue();
			}
			// nothing is failing to renew any more: the health indicator is not DOWN
			await().atMost(TTL).until(() -> !holder.renewalStatus().isFailing());

			// the wait that spanned the failover ends with the lock once the holder lets go
			assertThat(waiting).isNotDone();
			long releasedAt = System.nanoTime();
			contended.release();
			Lease waited = waiting.get(30, TimeUnit.SECONDS);
			System.out.printf("the waiter that waited through the failover acquired %.1f ms after the release%n",
					(System.nanoTime() - releasedAt) / 1e6);
			assertThat(waited.fencingToken()).isGreaterThan(contended.fencingToken());
			waited.release();

			// waiters wake promptly on the new master
			List<Double> latencies = handoffLatencies(holder, waiterService, contendedName, 40);
			System.out.printf("handoffs after the failover: p50 %.2f ms, p90 %.2f ms, max %.2f ms%n", percentile(latencies, 0.5),
					percentile(latencies, 0.9), latencies.get(latencies.size() - 1));
			// the median, which a loaded machine's stalls (tens of ms to 1-2 s, now and then) cannot move as they can
			// move the 4th slowest of 40 (a p90 bound, issue 32); a waiter missing the message would wait for the lease
			assertThat(percentile(latencies, 0.5)).as("median handoff latency in ms after the failover").isLessThan(50.0);
			assertThat(percentile(latencies, 0.9)).as("p90 handoff latency in ms after the failover").isLessThan(500.0);

			assertThat(recorder.lost).hasSize(1);
			replicated.release();
			healthy.forEach(Lease::release);
			return firstAcquisition.get();
		}
		finally {
			waiterThread.shutdownNow();
		}
	}

	private FailoverScenario() {
	}

}
