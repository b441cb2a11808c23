package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Waiters rely on release messages; these tests take the subscription away in the ways production does (a refused
 * SUBSCRIBE, a restart, a reset connection) and check that waiters neither sleep until the holder's lease time nor
 * miss the lock. The holders' leases are 30 s: only the engine's healing can end the waits early.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReleaseSubscriptionIntegrationTests {

	private static final Duration HOLDER_TTL = Duration.ofSeconds(30);

	private RedisServer server;

	private LockTestSupport support;

	@BeforeEach
	void start() {
		this.server = RedisServer.start();
		this.support = LockTestSupport.forServer(this.server);
	}

	@AfterEach
	void stop() {
		this.support.close();
		this.server.close();
	}

	@Test
	void theSubscriptionConnectionOpensWhenTheServiceStarts() {
		RedisLockService service = this.support.service();
		// before any lock call: the first waiter of a fresh process does not pay for the connection
		await().atMost(Duration.ofSeconds(5)).until(() -> List.of("lock:__subscriber__", 1L)
			.equals(this.server.execute("PUBSUB", "NUMSUB", "lock:__subscriber__")));
		assertThat(service.activeLeases()).isEmpty();
	}

	@Test
	void aWaiterWhoseChannelCannotBeSubscribedPollsAndGetsTheLockSoonAfterItsRelease() throws Exception {
		// an ACL user that may run commands and scripts on the lock keys, but may not use any channel
		this.server.execute("ACL", "SETUSER", "nochannels", "on", ">secret", "~*", "resetchannels", "+@all");
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(this.server.host(), this.server.port());
		configuration.setUsername("nochannels");
		configuration.setPassword("secret");
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(LockTestSupport.COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		try {
			RedisLockService waiter = RedisLockService.builder(factory).build();
			try {
				RedisLockService holder = this.support.service();
				Lease held = holder.acquire("unsubscribed", HOLDER_TTL, Duration.ZERO);
				CompletableFuture<Optional<Lease>> waiting = CompletableFuture
					.supplyAsync(() -> waiter.tryAcquire("unsubscribed", Duration.ofSeconds(5), Duration.ofSeconds(20)));
				await().atMost(Duration.ofSeconds(5)).until(() -> waiter.waitingThreads() == 1);
				held.release();
				long released = System.nanoTime();
				Optional<Lease> lease = waiting.get(20, TimeUnit.SECONDS);
				assertThat(lease).isPresent();
				// polling, not the holder's 30 s lease time, ended the wait (room for a loaded machine's stalls)
				assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(10));
				// (its release's PUBLISH is refused for this user: the release happens all the same, unannounced)

				// a refused subscription is sent again while its channel has waiters: once the channels are granted,
				// it is confirmed, and the waiter hears the release message rather than polling
				Lease again = holder.acquire("granted", HOLDER_TTL, Duration.ZERO);
				CompletableFuture<Optional<Lease>> next = CompletableFuture
					.supplyAsync(() -> waiter.tryAcquire("granted", Duration.ofSeconds(5), Duration.ofSeconds(25)));
				await().atMost(Duration.ofSeconds(5)).until(() -> waiter.waitingThreads() == 1);
				assertThat(this.server.execute("PUBSUB", "NUMSUB", "lock:{granted}:released"))
					.isEqualTo(List.of("lock:{granted}:released", 0L));
				this.server.execute("ACL", "SETUSER", "nochannels", "allchannels");
				await().atMost(Duration.ofSeconds(15)).until(() -> List.of("lock:{granted}:released", 1L)
					.equals(this.server.execute("PUBSUB", "NUMSUB", "lock:{granted}:released")));
				again.release();
				assertThat(next.get(20, TimeUnit.SECONDS)).isPresent();
			}
			finally {
				waiter.close();
			}
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void aWaiterWhoseServerRestartsGetsTheLockAtOnceNotAtTheLostHoldersLeaseTime() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support.service();
		holder.acquire("restarted", HOLDER_TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = CompletableFuture
			.supplyAsync(() -> waiter.tryAcquire("restarted", Duration.ofSeconds(5), Duration.ofSeconds(25)));
		await().atMost(Duration.ofSeconds(5)).until(() -> waiter.waitingThreads() == 1);
		// the restart loses the holder's lease; no release message will ever be published for it
		this.server.restart();
		long restarted = System.nanoTime();
		Optional<Lease> lease = waiting.get(25, TimeUnit.SECONDS);
		assertThat(lease).isPresent();
		assertThat(Duration.ofNanos(System.nanoTime() - restarted)).isLessThan(Duration.ofSeconds(10));
		lease.get().release();
	}

	@Test
	void aWaiterWhoseSubscriptionConnectionIsResetHearsTheNextRelease() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server)) {
			LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port());
			try {
				RedisLockService waiter = viaProxy.service();
				RedisLockService holder = this.support.service();
				Lease held = holder.acquire("reset", HOLDER_TTL, Duration.ZERO);
				CompletableFuture<Optional<Lease>> waiting = CompletableFuture
					.supplyAsync(() -> waiter.tryAcquire("reset", Duration.ofSeconds(5), Duration.ofSeconds(25)));
				await().atMost(Duration.ofSeconds(5)).until(() -> waiter.waitingThreads() == 1);
				// the waiter's connections (commands and subscription) are reset; the client reconnects
				proxy.resetAll();
				await().atMost(Duration.ofSeconds(10)).until(() -> List.of("lock:{reset}:released", 1L)
					.equals(this.server.execute("PUBSUB", "NUMSUB", "lock:{reset}:released")));
				held.release();
				long released = System.nanoTime();
				Optional<Lease> lease = waiting.get(25, TimeUnit.SECONDS);
				assertThat(lease).isPresent();
				// not the holder's 30 s lease time (room for a loaded machine's stalls)
				assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(10));
				lease.get().release();
			}
			finally {
				viaProxy.close();
			}
		}
	}

}
