package dev.distlock.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.distlock.core.Lease;
import dev.distlock.core.LockPage;
import dev.distlock.core.StoredLock;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every lock of a quorum of nodes (Redlock, 3 nodes), listed page by page with the nodes merged
 * ({@code LockDirectory}, issue 29): a lock held on every node is listed once with the nodes that hold it, a remnant
 * on one node is listed with that one node, and a node that does not answer is skipped rather than failing the page.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockDirectoryIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(60);

	private RedlockNodesFixture nodes;

	@BeforeEach
	void start() {
		this.nodes = new RedlockNodesFixture(3);
	}

	@AfterEach
	void stop() {
		this.nodes.servers.forEach(RedisServer::resume);
		this.nodes.close();
	}

	@Test
	void eachLockIsListedOnceWithTheNodesThatHoldIt() {
		RedlockLockService holder = this.nodes.service();
		RedlockLockService operator = this.nodes.service();
		Map<String, Lease> leases = new HashMap<>();
		for (int i = 0; i < 20; i++) {
			leases.put("job-" + i, holder.acquire("job-" + i, TTL, Duration.ZERO));
		}
		// what a release short of a quorum may leave: a hold on one node only, expiring at its time
		this.nodes.servers.get(2).execute("HSET", holder.redisKey("remnant"), "gone-owner", "1", "~t", "7");
		this.nodes.servers.get(2).execute("PEXPIRE", holder.redisKey("remnant"), "60000");

		List<LockPage> pages = LockDirectoryIntegrationTests.pages(operator, 6);

		List<StoredLock> listed = pages.stream().flatMap(page -> page.locks().stream()).toList();
		assertThat(listed).extracting(StoredLock::key).doesNotHaveDuplicates();
		Map<String, StoredLock> byKey = listed.stream().collect(Collectors.toMap(StoredLock::key, lock -> lock));
		assertThat(byKey.keySet()).containsAll(leases.keySet()).contains("remnant").hasSize(21);
		assertThat(pages).hasSizeGreaterThanOrEqualTo(3);
		leases.forEach((key, lease) -> assertThat(byKey.get(key)).satisfies(lock -> {
			assertThat(lock.nodes()).isEqualTo(3);
			assertThat(lock.holds()).isEqualTo(1);
			assertThat(lock.fencingToken()).isGreaterThanOrEqualTo(lease.fencingToken());
			assertThat(lock.remainingTtl()).isPositive().isLessThanOrEqualTo(TTL);
		}));
		assertThat(byKey.get("remnant")).satisfies(lock -> {
			assertThat(lock.nodes()).isEqualTo(1);
			assertThat(lock.fencingToken()).isEqualTo(7);
		});
		leases.values().forEach(Lease::release);
	}

	@Test
	void anotherInstanceSeesTheHoldersLabelInHolderAndInTheListing() {
		RedlockLockService holder = this.nodes
			.service(this.nodes.builder().holderApplication("billing").holderInstance("pod-4"));
		RedlockLockService operator = this.nodes.service();
		Lease outer = holder.acquire("invoice-9", TTL, Duration.ZERO);
		Lease inner = holder.acquire("invoice-9", TTL, Duration.ZERO);

		assertThat(outer.holder().toString()).startsWith("billing@pod-4 thread \"");
		assertThat(operator.holder("invoice-9")).hasValueSatisfying(held -> {
			assertThat(held.holds()).isEqualTo(2);
			assertThat(held.holder()).isEqualTo(outer.holder().toString());
		});
		assertThat(LockDirectoryIntegrationTests.byKey(operator).get("invoice-9"))
			.satisfies(lock -> assertThat(lock.holder()).isEqualTo(outer.holder().toString()));
		// stored once per hold, on every node: the re-entry wrote none
		this.nodes.servers.forEach(server -> assertThat(server.execute("HKEYS", holder.redisKey("invoice-9")))
			.asString()
			.contains(LockScripts.LABEL_PREFIX + outer.owner()));
		inner.release();
		outer.release();
		assertThat(operator.holder("invoice-9")).isEmpty();
	}

	@Test
	void aNodeThatDoesNotAnswerIsSkippedAndTheOthersListItsLocks() {
		RedlockLockService holder = this.nodes.service();
		RedlockLockService operator = this.nodes.service();
		Map<String, Lease> leases = new HashMap<>();
		for (int i = 0; i < 5; i++) {
			leases.put("job-" + i, holder.acquire("job-" + i, TTL, Duration.ZERO));
		}
		this.nodes.servers.get(0).pause();
		try {
			Map<String, StoredLock> listed = LockDirectoryIntegrationTests.byKey(operator);

			assertThat(listed).containsOnlyKeys(leases.keySet());
			assertThat(listed.values()).allSatisfy(lock -> assertThat(lock.nodes()).isEqualTo(2));
		}
		finally {
			this.nodes.servers.get(0).resume();
		}
		leases.values().forEach(Lease::release);
	}

}
