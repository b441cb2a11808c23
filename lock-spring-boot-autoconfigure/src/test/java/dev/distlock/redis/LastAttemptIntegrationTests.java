package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.wait.WaiterProbe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every wait ends with one last attempt at its deadline (issue 25): a waiter that no message wakes (here: the holder's
 * release could not be announced, its user having lost its channels after it acquired, so that its leases do not say
 * so and waiters do not poll for them) still finds the lock free when its wait ends, and takes it, rather than
 * reporting a timeout for a lock that was free. Blocking, asynchronous, fair and read-write waits alike.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LastAttemptIntegrationTests extends OneServerFixture {

	/** The holders' lease time: longer than the waits, so no waiter retries at the holder's lease end. */
	private static final Duration TTL = Duration.ofSeconds(60);

	/** Long enough for the holders to release well before it ends on a loaded machine. */
	private static final Duration WAIT = Duration.ofSeconds(8);

	private static final Duration DEADLINE = Duration.ofSeconds(15);

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	@Override
	@AfterEach
	protected void closeSupport() {
		super.closeSupport();
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

	@Test
	void aWaiterWhoseWakeUpIsLostTakesTheLockFreedMeanwhileAtTheEndOfItsWait() throws Exception {
		RedisLockService holder = this.support.service(RedisLockService.builder(withoutChannels()));
		// the fair keepalive (every third of the entry ttl) would find a lease handed to it: make it later than the wait
		RedisLockService waiter = this.support
			.service(RedisLockService.builder(this.support.connectionFactory()).fairEntryTtl(TTL));
		Map<String, Lease> held = new LinkedHashMap<>();
		held.put("blocking", holder.acquire(LockRequest.of("blocking", TTL, Duration.ZERO)));
		held.put("async", holder.acquire(LockRequest.of("async", TTL, Duration.ZERO)));
		held.put("read-blocking", holder.acquire(LockRequest.of("read-blocking", TTL, Duration.ZERO).write()));
		held.put("read-async", holder.acquire(LockRequest.of("read-async", TTL, Duration.ZERO).write()));
		held.put("write-blocking", holder.acquire(LockRequest.of("write-blocking", TTL, Duration.ZERO).read()));
		held.put("fair", holder.acquire(LockRequest.of("fair", TTL, Duration.ZERO).fair()));

		long started = System.nanoTime(); // before any wait began: every wait ends after started + WAIT
		List<Thread> threads = new ArrayList<>();
		Map<String, CompletableFuture<Optional<Lease>>> waits = new LinkedHashMap<>();
		waits.put("blocking", blocking(waiter, LockRequest.of("blocking", TTL, WAIT), threads));
		waits.put("async", waiter.tryAcquireAsync(LockRequest.of("async", TTL, WAIT), LockOwner.newOwner()));
		waits.put("read-blocking", blocking(waiter, LockRequest.of("read-blocking", TTL, WAIT).read(), threads));
		waits.put("read-async",
				waiter.tryAcquireAsync(LockRequest.of("read-async", TTL, WAIT).read(), LockOwner.newOwner()));
		// (a waiting writer also retries every third of its note's life, ReadWriteStore.MAX_NOTE_MILLIS: not only at the end)
		waits.put("write-blocking", blocking(waiter, LockRequest.of("write-blocking", TTL, WAIT).write(), threads));
		waits.put("fair", waiter.tryAcquireAsync(LockRequest.of("fair", TTL, WAIT).fair(), LockOwner.newOwner()));

		// every waiter made its attempts and sleeps: the blocking ones are parked between attempts, the others are
		// subscribed (their one attempt after the confirmation takes a round trip)
		await().atMost(DEADLINE).until(() -> waiter.waitingThreads() == waits.size());
		for (Thread thread : threads) {
			await().atMost(DEADLINE).until(() -> WaiterProbe.parkedBetweenAttempts(thread));
		}
		for (String channel : List.of(channel(waiter, "async"), channel(waiter, "read-async"),
				channel(waiter, "fair") + ":" + waiter.clientId())) {
			await().atMost(DEADLINE).until(() -> List.of(channel, 1L).equals(this.server.execute("PUBSUB", "NUMSUB", channel)));
		}
		// the releases cannot be announced (the holder's user has no channels now): nothing wakes the waiters
		this.server.execute("ACL", "SETUSER", "nochannels", "resetchannels");
		held.values().forEach(Lease::release);
		assertThat(Duration.ofNanos(System.nanoTime() - started)).as("released before the waits end").isLessThan(WAIT);

		List<String> timedOut = new ArrayList<>();
		for (Map.Entry<String, CompletableFuture<Optional<Lease>>> wait : waits.entrySet()) {
			Optional<Lease> lease = wait.getValue().get(WAIT.toSeconds() + 15, TimeUnit.SECONDS);
			lease.ifPresentOrElse(Lease::release, () -> timedOut.add(wait.getKey()));
		}
		assertThat(timedOut).as("waits that ended without the free lock").isEmpty();
		assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
	}

	private static String channel(RedisLockService service, String key) {
		return RedisLockService.channel(service.redisKey(key));
	}

	private static CompletableFuture<Optional<Lease>> blocking(RedisLockService service, LockRequest request,
			List<Thread> threads) {
		CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				result.complete(service.tryAcquire(request));
			}
			catch (Throwable ex) {
				result.completeExceptionally(ex);
			}
		}, "waiting-" + request.key());
		thread.setDaemon(true);
		thread.start();
		threads.add(thread);
		return result;
	}

	/**
	 * A connection factory whose user may do anything until the test takes its channels ({@code resetchannels}): its
	 * releases then publish nothing.
	 */
	private LettuceConnectionFactory withoutChannels() {
		this.server.execute("ACL", "SETUSER", "nochannels", "on", ">secret", "~*", "&*", "+@all");
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(this.server.host(),
				this.server.port());
		configuration.setUsername("nochannels");
		configuration.setPassword("secret");
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(LockTestSupport.COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return factory;
	}

}
