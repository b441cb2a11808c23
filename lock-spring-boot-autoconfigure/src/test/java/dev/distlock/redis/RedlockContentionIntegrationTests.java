package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redlock under contention (issue 31): one node per key, the tie-breaker, orders the contenders. The contender that
 * holds it keeps its grants and asks only the nodes it misses; a down, slow or silent tie-breaker does not stop an
 * acquisition while a quorum of the others answers; the kept grants' retry survives being run twice; and a release
 * that misses the quorum only for lack of answers returns normally, its silent nodes cleaned later. Real redis-servers,
 * faults from {@link FaultProxy}; every wait is a generous poll, nothing asserts speed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockContentionIntegrationTests {

	/** Long enough that nothing in these tests ends by expiry: what is cleaned was cleaned by the engine. */
	private static final Duration TTL = Duration.ofSeconds(60);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private RedlockNodesFixture nodes;

	private final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

	@BeforeEach
	void start() {
		this.nodes = new RedlockNodesFixture(3);
	}

	@AfterEach
	void stop() {
		this.nodes.servers.forEach(RedisServer::resume);
		this.nodes.close();
	}

	private RedisServer server(int i) {
		return this.nodes.servers.get(i);
	}

	private LockListener lostListener() {
		return new LockListener() {
			@Override
			public void lost(LockLostEvent event) {
				RedlockContentionIntegrationTests.this.lost.add(event);
			}
		};
	}

	/** The nodes other than {@code tie}, in order. */
	private static List<Integer> others(int tie) {
		List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
		others.remove(Integer.valueOf(tie));
		return others;
	}

	/** Another holder's hold on {@code node}, as its acquire script would leave it (it announces nothing). */
	private void holdElsewhere(int node, String redisKey) {
		server(node).execute("HSET", redisKey, "someone-else", "1");
		server(node).execute("PEXPIRE", redisKey, Long.toString(TTL.toMillis()));
	}

	/** The owner ids that hold {@code redisKey} on {@code node} (its fields that are not bookkeeping). */
	private List<String> holders(int node, String redisKey) {
		List<?> fields = (List<?>) server(node).execute("HKEYS", redisKey);
		return fields.stream().map(String::valueOf).filter((field) -> !field.startsWith("~")).toList();
	}

	private boolean gone(int node, String redisKey) {
		return Long.valueOf(0).equals(server(node).execute("EXISTS", redisKey));
	}

	/**
	 * A contender that got the tie-breaker but not a quorum keeps its grant and waits for the nodes it misses, instead of
	 * undoing everything and retrying at random: the lease it gets has the owner id of the grant it kept, and the
	 * tie-breaker's token is the one it granted first (a node asked again would have granted a new token).
	 */
	@Test
	void theTieBreakersHolderKeepsItsGrantAndAsksOnlyTheNodesItMisses() throws Exception {
		RedlockLockService service = this.nodes.service(this.nodes.builder().listener(lostListener()));
		String key = "kept";
		String redisKey = service.redisKey(key);
		int tie = service.tieBreaker(key);
		List<Integer> others = others(tie);
		others.forEach((node) -> holdElsewhere(node, redisKey));

		CompletableFuture<Lease> acquiring = CompletableFuture.supplyAsync(() -> service.acquire(key, TTL, WAIT));
		await().atMost(WAIT).until(() -> holders(tie, redisKey).size() == 1);
		String kept = holders(tie, redisKey).get(0);
		Object keptToken = server(tie).execute("HGET", redisKey, "~t");
		assertThat(acquiring).isNotDone();

		server(others.get(0)).execute("DEL", redisKey);
		Lease lease = acquiring.get(WAIT.toSeconds(), TimeUnit.SECONDS);
		assertThat(lease.owner()).as("the owner id of the kept grant").isEqualTo(kept);
		assertThat(server(tie).execute("HGET", redisKey, "~t")).as("the tie-breaker's first token").isEqualTo(keptToken);
		assertThat(server(others.get(0)).execute("HGET", redisKey, kept)).isEqualTo("1");
		assertThat(lease.isOwned()).isTrue();

		lease.release();
		assertThat(gone(tie, redisKey)).isTrue();
		assertThat(gone(others.get(0), redisKey)).isTrue();
		assertThat(holders(others.get(1), redisKey)).as("the other holder's hold is left alone")
			.containsExactly("someone-else");
		assertThat(this.lost).isEmpty();
	}

	/**
	 * The kept grant's retry of a missing node runs twice there (its reply lost with the connection, the client re-sends
	 * it after reconnecting): the node grants the same owner id again, and the lease is still one lease, renewed and
	 * released on every node, with no hold left behind and no loss.
	 */
	@Test
	void theKeptGrantsRetryRunTwiceOnAMissingNodeStillMakesOneLeaseReleasedEverywhere() throws Exception {
		Duration nodeTimeout = Duration.ofSeconds(2); // room for the reconnect and the re-sent call on a loaded machine
		RedlockLockService probe = this.nodes.service();
		String key = "kept-redelivered";
		String redisKey = probe.redisKey(key);
		int tie = probe.tieBreaker(key);
		List<Integer> others = others(tie);
		int missing = others.get(0);
		try (FaultProxy proxy = FaultProxy.to(server(missing))) {
			List<RedisConnectionFactory> factories = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				factories.add((i == missing) ? this.nodes.factory(proxy.host(), proxy.port(), nodeTimeout)
						: this.nodes.factory(server(i).host(), server(i).port(), nodeTimeout));
			}
			RedlockLockService service = this.nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(nodeTimeout)
				.listener(lostListener()));
			others.forEach((node) -> holdElsewhere(node, redisKey));
			CompletableFuture<Lease> acquiring = CompletableFuture.supplyAsync(() -> service.acquire(key, TTL, WAIT));
			await().atMost(WAIT).until(() -> holders(tie, redisKey).size() == 1);
			String kept = holders(tie, redisKey).get(0);

			// the next acquire on the missing node runs twice: a refused retry, or the one that grants once the node is
			// free (both run twice; either way the grant below comes from a node that ran the retry more than once)
			proxy.redeliverNext(LockScripts.ACQUIRE.getSha1());
			server(missing).execute("DEL", redisKey);
			Lease lease = acquiring.get(WAIT.toSeconds(), TimeUnit.SECONDS);
			assertThat(lease.owner()).isEqualTo(kept);
			await().atMost(WAIT).until(() -> proxy.redeliveries() == 1);
			// the missing node holds the same owner id once, whichever run's token the client kept
			await().atMost(WAIT).until(() -> "1".equals(server(missing).execute("HGET", redisKey, kept)));
			assertThat(lease.isOwned()).isTrue();

			lease.release();
			await().atMost(WAIT).until(() -> gone(tie, redisKey) && gone(missing, redisKey));
			assertThat(holders(others.get(1), redisKey)).containsExactly("someone-else");
			assertThat(this.lost).isEmpty();
		}
	}

	/**
	 * A paused tie-breaker (SIGSTOP: no answer at all) does not stop acquisition: two instances take turns on the key
	 * through a quorum of the other two nodes, and exclude each other meanwhile.
	 */
	@Test
	void aPausedTieBreakerDoesNotStopAcquisitionWhileAQuorumOfTheOthersAnswers() throws Exception {
		RedlockLockService first = this.nodes.service(this.nodes.builder().listener(lostListener()));
		RedlockLockService second = this.nodes.service(this.nodes.builder().listener(lostListener()));
		String key = "paused-tie";
		String redisKey = first.redisKey(key);
		int tie = first.tieBreaker(key);
		server(tie).pause();
		int[] counter = new int[1];
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> work = new ArrayList<>();
			for (RedlockLockService service : List.of(first, second, first, second)) {
				work.add(pool.submit(() -> {
					for (int i = 0; i < 5; i++) {
						try (Lease lease = service.acquire(key, TTL, Duration.ofSeconds(60))) {
							int read;
							synchronized (counter) { // visibility only: the lease is what excludes
								read = counter[0];
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
			for (Future<?> future : work) {
				future.get(100, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(counter[0]).isEqualTo(20);
		Lease held = first.acquire(key, TTL, WAIT);
		assertThat(second.tryAcquire(key, TTL, Duration.ZERO)).isEmpty();
		held.release();
		server(tie).resume();
		// what the paused node ran when it resumed (grants it could not answer in time) is discarded there
		await().atMost(WAIT).until(() -> gone(0, redisKey) && gone(1, redisKey) && gone(2, redisKey));
		assertThat(this.lost).isEmpty();
	}

	/**
	 * A tie-breaker whose replies are lost (it runs every call, the client hears nothing) does not stop acquisition
	 * either; what it granted unheard is discarded there once it answers again.
	 */
	@Test
	void aTieBreakerThatLosesItsRepliesDoesNotStopAcquisition() throws Exception {
		RedlockLockService probe = this.nodes.service();
		String key = "silent-tie";
		String redisKey = probe.redisKey(key);
		int tie = probe.tieBreaker(key);
		try (FaultProxy proxy = FaultProxy.to(server(tie))) {
			List<RedisConnectionFactory> factories = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				factories.add((i == tie) ? this.nodes.factory(proxy.host(), proxy.port(), Duration.ofSeconds(5))
						: this.nodes.factory(server(i).host(), server(i).port(), Duration.ofSeconds(5)));
			}
			RedlockLockService service = this.nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(Duration.ofMillis(200))
				.listener(lostListener()));
			RedlockLockService other = this.nodes.service(this.nodes.builder().listener(lostListener()));
			proxy.dropReplies();
			for (int i = 0; i < 3; i++) {
				Lease lease = service.acquire(key, TTL, WAIT);
				assertThat(other.tryAcquire(key, TTL, Duration.ZERO)).isEmpty();
				lease.release();
				Lease theirs = other.acquire(key, TTL, WAIT);
				assertThat(service.tryAcquire(key, TTL, Duration.ZERO)).isEmpty();
				theirs.release();
			}
			proxy.heal();
			await().atMost(WAIT).until(() -> gone(0, redisKey) && gone(1, redisKey) && gone(2, redisKey));
			assertThat(this.lost).isEmpty();
		}
	}

	/**
	 * A last release that misses the quorum only because nodes did not answer within the node timeout returns normally
	 * (the lease provably ends: no longer renewed, the silent nodes keep it at most its lease time), tells the listeners
	 * it was released, and the silent nodes are cleaned once they answer again, long before the lease time.
	 */
	@Test
	void aReleaseShortOfAQuorumReturnsNormallyAndTheSilentNodesAreCleanedLater() throws Exception {
		try (FaultProxy first = FaultProxy.to(server(1)); FaultProxy second = FaultProxy.to(server(2))) {
			List<RedisConnectionFactory> factories = List.of(
					this.nodes.factory(server(0).host(), server(0).port(), Duration.ofSeconds(5)),
					this.nodes.factory(first.host(), first.port(), Duration.ofSeconds(5)),
					this.nodes.factory(second.host(), second.port(), Duration.ofSeconds(5)));
			List<Boolean> released = new CopyOnWriteArrayList<>();
			RedlockLockService service = this.nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(Duration.ofMillis(200))
				.listener(lostListener())
				.listener(new LockListener() {
					@Override
					public void released(Lease lease, Duration held, boolean wasOwned) {
						released.add(wasOwned);
					}
				}));
			String key = "release-short";
			String redisKey = service.redisKey(key);
			Lease lease = service.acquire(key, TTL, WAIT);
			first.blackhole();
			second.blackhole();

			lease.release(); // 1 of 3 nodes confirms it: no exception

			assertThat(lease.isHeld()).isFalse();
			assertThat(released).containsExactly(true);
			assertThat(service.activeLeaseCount()).isZero();
			assertThat(gone(0, redisKey)).isTrue();
			assertThat(gone(1, redisKey) || gone(2, redisKey)).as("the silent nodes still hold it").isFalse();
			first.heal();
			second.heal();
			await().atMost(WAIT).until(() -> gone(1, redisKey) && gone(2, redisKey));
			assertThat(this.lost).isEmpty();
			// and the key is free for the next holder at once
			Lease next = service.acquire(key, TTL, Duration.ZERO);
			next.release();
		}
	}

}
