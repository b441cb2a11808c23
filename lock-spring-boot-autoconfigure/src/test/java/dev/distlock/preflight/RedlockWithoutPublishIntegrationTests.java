package dev.distlock.preflight;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.redis.RedlockLockService;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Redlock under an ACL without {@code +publish} (issue 29): the holder's lease on each node notes that its release will
 * not be announced, and a waiter of another instance that finds the note polls, instead of sleeping until the holder's
 * lease time (20 s here, far beyond what a loaded machine takes) although it subscribed on every node.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockWithoutPublishIntegrationTests {

	private static final String PREFIX = "orders";

	private static final Duration DEADLINE = Duration.ofSeconds(15);

	private static final Duration HOLDER_TTL = Duration.ofSeconds(20);

	private final List<RedisServer> nodes = new ArrayList<>();

	private final SecuredRedis secured = new SecuredRedis();

	private final ExecutorService threads = Executors.newFixedThreadPool(2);

	private final List<RedlockLockService> services = new ArrayList<>();

	@BeforeEach
	void start() {
		for (int i = 0; i < 3; i++) {
			RedisServer node = RedisServer.start();
			this.nodes.add(node);
			String acl = LockPreflight.minimalAcl(PREFIX);
			assertThat(acl).contains(" +publish");
			SecuredRedis.createUser(node, "nopublish", "pw", acl.replace(" +publish", ""));
		}
	}

	@AfterEach
	void stop() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
		this.services.forEach(RedlockLockService::close);
		this.secured.close();
		this.nodes.forEach(RedisServer::close);
	}

	/** An instance of its own: its own connection factories to the nodes. */
	private RedlockLockService instance() {
		List<RedisConnectionFactory> factories = new ArrayList<>();
		for (RedisServer node : this.nodes) {
			factories.add(this.secured.factory(node, "nopublish", "pw"));
		}
		RedlockLockService service = RedlockLockService.builder(factories)
			.keyPrefix(PREFIX)
			.nodeTimeout(Duration.ofMillis(500))
			.build();
		this.services.add(service);
		// a first call opens the connections (AUTH, script loading), which a loaded machine can stretch past the node
		// timeout: not what this test is about, so it may take a few attempts
		service.acquire("warm-up-" + this.services.size(), HOLDER_TTL, DEADLINE).release();
		return service;
	}

	private long subscribers(RedisServer node, String channel) {
		List<?> reply = (List<?>) node.execute("PUBSUB", "NUMSUB", channel);
		return (Long) reply.get(1);
	}

	@Test
	void aSubscribedWaiterOfAnotherInstancePollsAndGetsTheLockLongBeforeTheHoldersLeaseTime() throws Exception {
		assumeThat(this.nodes.get(0).version())
			.as("Redis 6.2 cannot tell a script what the ACL allows (redis.acl_check_cmd)")
			.doesNotStartWith("6.");
		RedlockLockService holder = instance();
		RedlockLockService other = instance();
		Lease held = holder.acquire("sku-20", HOLDER_TTL, Duration.ZERO);
		assertThat(this.nodes.get(0).execute("HEXISTS", holder.redisKey("sku-20"), "~u")).isEqualTo(1L);
		CompletableFuture<Optional<Lease>> waiting = CompletableFuture
			.supplyAsync(() -> other.tryAcquire("sku-20", Duration.ofSeconds(5), Duration.ofSeconds(30)), this.threads);
		// the waiter subscribed on every node: a release message could reach it, if one were sent
		await().atMost(DEADLINE).until(() -> this.nodes.stream()
			.allMatch(node -> subscribers(node, holder.redisKey("sku-20") + ":released") == 1));

		held.release();
		long released = System.nanoTime();

		Lease next = waiting.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).orElseThrow();
		assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(HOLDER_TTL.dividedBy(2));
		next.release();
	}

}
