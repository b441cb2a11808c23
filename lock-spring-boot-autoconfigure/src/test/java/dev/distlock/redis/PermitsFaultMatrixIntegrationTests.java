package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.LeaseFaultMatrixIntegrationTests.Events;
import dev.distlock.redis.LeaseFaultMatrixIntegrationTests.Fault;
import dev.distlock.redis.LeaseFaultMatrixIntegrationTests.Outcome;
import dev.distlock.redis.internal.script.PermitScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.core.script.RedisScript;

import static dev.distlock.redis.LeaseFaultMatrixIntegrationTests.CONVERGENCE;
import static dev.distlock.redis.LeaseFaultMatrixIntegrationTests.EXTENSION;
import static dev.distlock.redis.LeaseFaultMatrixIntegrationTests.SETUP;
import static dev.distlock.redis.LeaseFaultMatrixIntegrationTests.TTL;
import static dev.distlock.redis.LeaseFaultMatrixIntegrationTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The fault matrix of {@link LeaseFaultMatrixIntegrationTests} for a semaphore's permits (issue 30): every permit
 * operation under every fault of that matrix (its {@link Fault}s, re-delivery included, with its timings), on a
 * semaphore of {@value #PERMITS} permits of which another instance holds one throughout. After the heal, a caller
 * must be able to count on:
 * <ol>
 * <li>a clear outcome naming the key, within the call's wait and two command timeouts (and a margin); under
 * re-delivery, the outcome of the first run;</li>
 * <li>never more live holders than permits in Redis, at any instant a monitor reading the server directly saw;</li>
 * <li>within one lease time, the live permits in Redis (owner and that permit's token) are exactly those the services
 * believe they hold, each counting at least the holds its owner believes open (a permit in Redis that its owner does
 * not know is discarded by the reconciler or ends at its lease time), and a permit no service holds is free for
 * others;</li>
 * <li>no permit is believed valid beyond its deadline in Redis; every permit found lost was announced;</li>
 * <li>releasing what is left leaves nothing of the semaphore in Redis, and the other instance's permit was never
 * touched.</li>
 * </ol>
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PermitsFaultMatrixIntegrationTests {

	static final int PERMITS = 2;

	private static final AtomicInteger cases = new AtomicInteger();

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
		// loaded up front, so that no case's first call of a script differs from the others (NOSCRIPT, then EVAL)
		for (RedisScript<?> script : List.of(PermitScripts.ACQUIRE, PermitScripts.RELEASE, PermitScripts.EXTEND,
				PermitScripts.RENEW_ALL, PermitScripts.OWNED, ReadWriteScripts.DISCARD)) {
			server.execute("SCRIPT", "LOAD", script.getScriptAsString());
		}
	}

	static Stream<Arguments> matrix() {
		// every operation under every fault: no row here waits for a loss, which a re-delivery would not cause
		return Arrays.stream(Operation.values())
			.flatMap(operation -> Arrays.stream(Fault.values()).map(fault -> Arguments.of(operation, fault)));
	}

	@ParameterizedTest(name = "{0} under {1}")
	@MethodSource("matrix")
	void afterTheFaultHealsRedisHoldsThePermitsTheServicesBelieve(Operation operation, Fault fault) throws Exception {
		try (Case c = new Case(operation, fault)) {
			operation.setUp(c);
			fault.inject(c.proxy);
			Outcome outcome;
			try {
				outcome = Outcome.of(operation.toString(), operation.wait, c.commandTimeout, System.nanoTime(),
						() -> operation.run(c));
			}
			finally {
				fault.end(c.proxy);
			}
			if (fault == Fault.REDELIVERY) {
				assertThat(outcome.failure()).as("%s, a call run twice", operation).isNull();
			}
			c.assertClear(outcome);
			assertThat(outcome.took()).as("how long %s took", outcome.what()).isLessThanOrEqualTo(outcome.bound());
			await("Redis and the services agreeing on '" + c.key + "'").atMost(CONVERGENCE)
				.pollInterval(Duration.ofMillis(20))
				.untilAsserted(c::assertAgreement);
			c.assertValidityNeverOverstated();
			c.assertLossesSurfaced();
			c.releaseEverything();
			c.live.assertNeverAbovePermits();
			assertThat(server.execute("EXISTS", c.redisKey)).as("what is left of '%s' in Redis", c.key).isEqualTo(0L);
		}
	}

	/** The permit operations; each is set up on a healthy network and then runs under the fault. */
	enum Operation {

		ACQUIRE("tryAcquire of a free permit, no wait", Duration.ZERO) {
			@Override
			Object run(Case c) {
				return c.track(c.client.tryAcquire(c.request(Duration.ZERO)));
			}
		},

		ACQUIRE_WAITING("tryAcquire with every permit held, waiting 1s", WAIT) {
			@Override
			void setUp(Case c) {
				c.holdOthers(c.third.acquire(c.request(SETUP)));
			}

			@Override
			Object run(Case c) {
				return c.track(c.client.tryAcquire(c.request(WAIT)));
			}
		},

		REENTER("re-entry by the holding thread: no second permit", Duration.ZERO) {
			@Override
			void setUp(Case c) {
				c.subject = c.hold(c.client.acquire(c.request(SETUP)));
			}

			@Override
			Object run(Case c) {
				return c.track(c.client.tryAcquire(c.request(Duration.ZERO)));
			}
		},

		RELEASE_LAST("release of the permit's last hold", Duration.ZERO) {
			@Override
			void setUp(Case c) {
				c.subject = c.hold(c.client.acquire(c.request(SETUP)));
			}

			@Override
			Object run(Case c) {
				return c.release(c.subject);
			}
		},

		RELEASE_INNER("release of an inner hold (of two)", Duration.ZERO) {
			@Override
			void setUp(Case c) {
				c.hold(c.client.acquire(c.request(SETUP)));
				c.subject = c.hold(c.client.acquire(c.request(SETUP)));
			}

			@Override
			Object run(Case c) {
				return c.release(c.subject);
			}
		},

		EXTEND("extend", Duration.ZERO) {
			@Override
			void setUp(Case c) {
				c.subject = c.hold(c.client.acquire(c.request(SETUP)));
			}

			@Override
			Object run(Case c) {
				c.subject.lease().extend(EXTENSION);
				return "extended";
			}
		},

		WATCHDOG("watchdog renewal, one renewal into the fault", TTL) {
			@Override
			void setUp(Case c) {
				c.subject = c.hold(c.client.acquire(c.request(SETUP)));
				await().atMost(SETUP).pollInterval(Duration.ofMillis(2)).until(() -> c.events.renewed.get() > 0);
				c.renewalsBeforeFault = c.events.renewalResults();
			}

			@Override
			Object run(Case c) {
				await().atMost(TTL.plus(c.commandTimeout.multipliedBy(2))).pollInterval(Duration.ofMillis(5))
					.until(() -> c.events.renewalResults() > c.renewalsBeforeFault || c.subject.lease().isLost());
				return c.subject.lease().isLost() ? "lost" : "held";
			}
		};

		private final String description;

		final Duration wait;

		Operation(String description, Duration wait) {
			this.description = description;
			this.wait = wait;
		}

		void setUp(Case c) throws Exception {
		}

		abstract Object run(Case c) throws Exception;

		@Override
		public String toString() {
			return this.description;
		}

	}

	/** A permit hold of a case, and whether the case released it. */
	static final class Held {

		private final Lease lease;

		volatile boolean released;

		Held(Lease lease) {
			this.lease = lease;
		}

		Lease lease() {
			return this.lease;
		}

	}

	/** One cell of the matrix: its own semaphore, proxy, client and two other instances. */
	static final class Case implements AutoCloseable {

		final String key;

		final String redisKey;

		final FaultProxy proxy;

		final LockTestSupport viaProxy;

		final LockTestSupport direct;

		final Events events = new Events();

		final RedisLockService client;

		/** Another instance, holding one permit throughout the case: only the client's permit may change. */
		final RedisLockService others;

		/** A third instance, for the permit that fills the semaphore, and the probe of a free permit. */
		final RedisLockService third;

		final Lease othersPermit;

		final List<Held> held = new CopyOnWriteArrayList<>();

		final ExecutorService threads = Executors.newCachedThreadPool();

		final Duration commandTimeout;

		final LiveHolders live;

		Held subject;

		int renewalsBeforeFault;

		Case(Operation operation, Fault fault) throws Exception {
			this.commandTimeout = fault.commandTimeout();
			this.key = ("permits-" + operation.name() + "-" + fault.name()).toLowerCase(Locale.ROOT);
			cases.incrementAndGet();
			this.proxy = FaultProxy.to(server);
			this.viaProxy = new LockTestSupport(this.proxy.host(), this.proxy.port());
			this.direct = LockTestSupport.forServer(server);
			this.client = this.viaProxy.service(RedisLockService.builder(this.viaProxy.connectionFactory(this.commandTimeout))
				.idleUnsubscribe(Duration.ofMinutes(1))
				.listener(this.events));
			this.others = this.direct.service();
			this.third = this.direct.service();
			this.redisKey = this.client.redisKey(this.key);
			this.live = new LiveHolders(this.redisKey);
			this.threads.submit(this.live);
			try {
				warmUp();
				this.othersPermit = this.others.acquire(request(SETUP));
			}
			catch (Exception | Error ex) {
				close();
				throw ex;
			}
		}

		/**
		 * Before any fault, the client's command and pub/sub connections are open, the latter subscribed, and the
		 * permit scripts run through the proxy once: a permit the client waits for and gets at a release.
		 */
		private void warmUp() throws Exception {
			String warmUp = this.key + "-warm-up";
			Lease blocker = this.others.acquire(LockRequest.of(warmUp, SETUP, SETUP).permits(1));
			Future<?> waiter = this.threads.submit(() -> {
				Lease lease = this.client.acquire(LockRequest.of(warmUp, SETUP, SETUP).permits(1));
				lease.extend(EXTENSION);
				lease.release();
			});
			await().atMost(SETUP).pollInterval(Duration.ofMillis(5)).until(() -> this.proxy.connectionCount() == 2
					&& subscribers(this.client.redisKey(warmUp) + ":released") == 1);
			blocker.release();
			waiter.get(SETUP.toMillis(), TimeUnit.MILLISECONDS);
		}

		LockRequest request(Duration wait) {
			return LockRequest.of(this.key, TTL, wait).permits(PERMITS);
		}

		Held hold(Lease lease) {
			Held held = new Held(lease);
			this.held.add(held);
			return held;
		}

		void holdOthers(Lease lease) {
			this.held.add(new Held(lease));
		}

		Optional<Lease> track(Optional<Lease> lease) {
			lease.ifPresent(this::hold);
			return lease;
		}

		Object release(Held held) {
			held.released = true;
			held.lease.release();
			return "released";
		}

		/** A result, or one of the exceptions a caller is told to expect, naming the key. */
		void assertClear(Outcome outcome) {
			Throwable failure = outcome.failure();
			if (failure != null) {
				assertThat(failure).as("how %s ended", outcome.what())
					.isInstanceOfAny(LockUnavailableException.class, LockLostException.class,
							LockAcquisitionTimeoutException.class)
					.hasMessageContaining("'" + this.key + "'");
			}
		}

		/**
		 * The live permits in Redis (deadline not passed on the server's clock) are those the services believe held,
		 * owner and token; Redis counts at least the holds each owner believes open; the other instance's permit is
		 * among them; with no permit of the client's, one is free for others.
		 */
		void assertAgreement() throws Exception {
			Map<String, String> hash = hash();
			long now = serverMillis();
			Set<String> inRedis = hash.keySet().stream()
				.filter(field -> !field.startsWith("~") && Long.parseLong(hash.get("~e:" + field)) >= now)
				.map(owner -> owner + " token " + hash.get("~k:" + owner)).collect(Collectors.toSet());
			List<LeaseSnapshot> believed = Stream.concat(believedHeld(this.client), Stream.concat(
					believedHeld(this.others), believedHeld(this.third))).toList();
			Set<String> believedIds = believed.stream().map(lease -> lease.owner() + " token " + lease.fencingToken())
				.collect(Collectors.toSet());
			String picture = "Redis holds " + hash + " (server clock " + now + "); the client lists "
					+ leases(this.client);
			assertThat(inRedis).as("live permits in Redis that no service knows of; %s", picture).isSubsetOf(believedIds);
			assertThat(believedIds).as("permits believed held that Redis does not have; %s", picture).isSubsetOf(inRedis);
			assertThat(inRedis).as("the other instance's permit; %s", picture)
				.contains(this.othersPermit.owner() + " token " + this.othersPermit.fencingToken());
			for (LeaseSnapshot lease : believed) {
				assertThat(Long.parseLong(hash.get(lease.owner()))).as("the holds Redis counts for %s; %s",
						lease.owner(), picture).isGreaterThanOrEqualTo(lease.holdCount());
			}
			if (inRedis.size() < PERMITS) {
				Optional<Lease> probe = this.threads.submit(() -> this.third.tryAcquire(request(Duration.ZERO)))
					.get(SETUP.toMillis(), TimeUnit.MILLISECONDS);
				assertThat(probe).as("a free permit, free for others; %s", picture).isPresent();
				probe.get().release();
			}
		}

		/** No permit a service believes held is valid beyond its deadline in Redis. */
		void assertValidityNeverOverstated() {
			for (Held held : this.held) {
				if (held.released || !held.lease.isHeld() || held.lease.isLost()) {
					continue;
				}
				Object deadline = server.execute("HGET", this.redisKey, "~e:" + held.lease.owner());
				assertThat(deadline).as("the deadline in Redis of %s", held.lease).isNotNull();
				long before = System.currentTimeMillis();
				long serverNow = serverMillis();
				long after = System.currentTimeMillis();
				long latest = Long.parseLong(String.valueOf(deadline)) - serverNow + after;
				assertThat(held.lease.validUntil().toEpochMilli()).as("how long %s believes itself valid (read %d ms)",
						held.lease, after - before).isLessThanOrEqualTo(latest);
			}
		}

		void assertLossesSurfaced() {
			for (Held held : this.held) {
				if (held.lease.isLost()) {
					await("the loss of " + held.lease + " announced").atMost(Duration.ofSeconds(10))
						.pollInterval(Duration.ofMillis(5))
						.until(() -> this.events.lost.stream().anyMatch(event -> event.owner().equals(held.lease.owner())
								&& event.fencingToken() == held.lease.fencingToken()));
				}
			}
		}

		/** Release what is still held, inner holds first; a lost permit's release says it was lost. */
		void releaseEverything() {
			assertThat(this.othersPermit.isOwned()).as("the other instance's permit").isTrue();
			this.othersPermit.release();
			List<Held> open = new ArrayList<>(this.held);
			Collections.reverse(open);
			for (Held held : open) {
				if (held.released) {
					continue;
				}
				held.released = true;
				if (held.lease.isLost()) {
					assertThatExceptionOfType(LockLostException.class).as("the release of the lost %s", held.lease)
						.isThrownBy(held.lease::release);
				}
				else {
					held.lease.release();
				}
			}
			assertThat(leases(this.client)).as("the client's permits after the releases").isEqualTo("[]");
		}

		private Stream<LeaseSnapshot> believedHeld(RedisLockService service) {
			return service.activeLeases().stream().filter(lease -> lease.key().equals(this.key) && !lease.lost());
		}

		private String leases(RedisLockService service) {
			return service.activeLeases().stream().filter(lease -> lease.key().equals(this.key))
				.map(lease -> lease.owner() + " token " + lease.fencingToken() + " holds " + lease.holdCount()
						+ (lease.lost() ? " LOST" : ""))
				.toList().toString();
		}

		private Map<String, String> hash() {
			List<?> fields = (List<?>) server.execute("HGETALL", this.redisKey);
			Map<String, String> hash = new HashMap<>();
			for (int i = 0; fields != null && i + 1 < fields.size(); i += 2) {
				hash.put(String.valueOf(fields.get(i)), String.valueOf(fields.get(i + 1)));
			}
			return hash;
		}

		@Override
		public void close() {
			this.live.running = false;
			this.threads.shutdownNow();
			this.viaProxy.close();
			this.direct.close();
			this.proxy.close();
		}

	}

	private static long serverMillis() {
		List<?> time = (List<?>) server.execute("TIME");
		return Long.parseLong(String.valueOf(time.get(0))) * 1000 + Long.parseLong(String.valueOf(time.get(1))) / 1000;
	}

	private static long subscribers(String channel) {
		List<?> reply = (List<?>) server.execute("PUBSUB", "NUMSUB", channel);
		return (Long) reply.get(1);
	}

	/**
	 * Reads one semaphore straight from the server, again and again while its case runs: its live holders (deadline
	 * not passed on the server's clock) against its permits, in one atomic script. Sampling, not synchronisation: it
	 * catches a breach while it lasts.
	 */
	static final class LiveHolders implements Runnable {

		private static final String READ = """
				local clock = redis.call('time')
				local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
				local fields = redis.call('hgetall', KEYS[1])
				local live = 0
				for i = 1, #fields, 2 do
				  local f = fields[i]
				  if string.sub(f, 1, 1) ~= '~' then
				    local deadline = redis.call('hget', KEYS[1], '~e:' .. f)
				    if deadline and tonumber(deadline) >= now then live = live + 1 end
				  end
				end
				return {live, tonumber(redis.call('hget', KEYS[1], '~p') or '0')}
				""";

		private final String redisKey;

		private final List<String> breaches = new CopyOnWriteArrayList<>();

		private final AtomicLong reads = new AtomicLong();

		volatile boolean running = true;

		LiveHolders(String redisKey) {
			this.redisKey = redisKey;
		}

		@Override
		public void run() {
			while (this.running) {
				try {
					List<?> reply = (List<?>) server.execute("EVAL", READ, "1", this.redisKey);
					long live = (Long) reply.get(0);
					long permits = (Long) reply.get(1);
					if (live > PERMITS || (permits != 0 && live > permits)) {
						this.breaches.add(live + " live holders of " + permits + " permits");
					}
					this.reads.incrementAndGet();
				}
				catch (RuntimeException ex) {
					// a read a loaded machine timed out: the next one samples again
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // pacing: a socket a read
			}
		}

		void assertNeverAbovePermits() {
			assertThat(this.reads.get()).as("reads of the semaphore").isPositive();
			assertThat(this.breaches).as("moments with more live holders than permits in Redis").isEmpty();
		}

	}

}
