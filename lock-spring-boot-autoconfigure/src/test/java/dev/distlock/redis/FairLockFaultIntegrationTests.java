package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Lost replies of the fair scripts ("every call that timed out may have run"): the client reaches Redis through a
 * {@link FaultProxy} that drops every reply; the queue moves on, no lease is stuck for its ttl, and nothing is left
 * in Redis. The client's entry ttl is 60 s, so nothing here is explained by an entry's expiry.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FairLockFaultIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private FaultProxy proxy;

	private LockTestSupport viaProxy;

	private RedisLockService client;

	private RedisLockService others;

	@BeforeEach
	void connect() throws Exception {
		this.proxy = FaultProxy.to(this.server);
		this.viaProxy = new LockTestSupport(this.proxy.host(), this.proxy.port());
		this.client = this.viaProxy.service(RedisLockService.builder(this.viaProxy.connectionFactory(Duration.ofMillis(500)))
			.idleUnsubscribe(Duration.ofMinutes(1))
			.fairEntryTtl(Duration.ofSeconds(60)));
		// a waiter of these keeps its queue entry through stalls of 4 s of a loaded machine (issue 32)
		this.others = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.fairEntryTtl(Duration.ofSeconds(6)));
	}

	@AfterEach
	void disconnect() {
		this.threads.shutdownNow();
		this.viaProxy.close();
		this.proxy.close();
	}

	private Optional<Lease> fair(RedisLockService service, String key, Duration wait) {
		return service.tryAcquire(LockRequest.of(key, TTL, wait).fair());
	}

	private long queued(String key) {
		return (Long) this.server.execute("ZCARD", this.others.redisKey(key) + ":q");
	}

	/** The client waits for {@code key} (queued, its channel subscribed through the proxy) on a thread. */
	private Future<Optional<Lease>> clientWaits(String key, Duration wait) {
		Future<Optional<Lease>> waiting = this.threads.submit(() -> fair(this.client, key, wait));
		String channels = this.client.redisKey(key) + ":released:*"; // the client's hand-over channel of the key
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2)).until(() -> queued(key) == 1
				&& ((List<?>) this.server.execute("PUBSUB", "CHANNELS", channels)).size() == 1);
		return waiting;
	}

	private void assertNothingLeft() {
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(10))
			.untilAsserted(() -> assertThat(LockTestSupport.leftKeys(this.server, "*")).isEmpty());
	}

	@Test
	void lostRepliesOfFairAcquireLeaveNoEntryBehind() throws Exception {
		Lease holder = fair(this.others, "acquire", Duration.ZERO).orElseThrow();
		this.proxy.dropReplies();
		Throwable failure = catchThrowable(() -> fair(this.client, "acquire", Duration.ofMillis(1500)));
		assertThat(failure).isInstanceOf(LockUnavailableException.class);
		// its attempts ran and queued it, its leave ran too: no entry left although no reply came
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> queued("acquire") == 0);
		this.proxy.heal();
		holder.release();
		assertThat(this.server.execute("EXISTS", this.others.redisKey("acquire"))).isEqualTo(0L);
		fair(this.others, "acquire", Duration.ZERO).orElseThrow().release();
		assertNothingLeft();
	}

	@Test
	void aLostReplyOfFairReleaseStillHandsTheLeaseOn() throws Exception {
		Lease held = fair(this.client, "release", Duration.ZERO).orElseThrow();
		Future<Lease> next = this.threads.submit(() -> fair(this.others, "release", Duration.ofSeconds(30)).orElseThrow());
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2)).until(() -> queued("release") == 1);
		this.proxy.dropReplies();
		assertThat(catchThrowable(held::release)).isInstanceOf(LockUnavailableException.class);
		Lease lease = next.get(10, TimeUnit.SECONDS);
		assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
		this.proxy.heal();
		lease.release();
		assertNothingLeft();
	}

	@Test
	void aWaiterHandedTheLeaseWhoseLeaveGetsNoReplyPassesItOn() throws Exception {
		Lease holder = fair(this.others, "leave", Duration.ZERO).orElseThrow();
		Future<Optional<Lease>> waiting = clientWaits("leave", Duration.ofSeconds(3));
		this.proxy.dropReplies(); // the hand-over's message and every reply to the client are lost from now on
		holder.release();
		// its next keepalive is 20 s away, so the wait ends first; the leave runs, its reply is lost
		Optional<Lease> outcome = Optional.empty();
		try {
			outcome = waiting.get(20, TimeUnit.SECONDS);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			assertThat(ex.getCause()).isInstanceOf(LockUnavailableException.class);
		}
		assertThat(outcome).isEmpty();
		// the leave passed the handed lease on (nobody else waits: deleted), long before its 30 s ttl (the deadline ends
		// about 20 s after the hand-over: room for a loaded machine's stalls, and still short of that ttl)
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(5))
			.until(() -> (Long) this.server.execute("EXISTS", this.others.redisKey("leave")) == 0);
		this.proxy.heal();
		fair(this.others, "leave", Duration.ZERO).orElseThrow().release();
		assertNothingLeft();
	}

}
