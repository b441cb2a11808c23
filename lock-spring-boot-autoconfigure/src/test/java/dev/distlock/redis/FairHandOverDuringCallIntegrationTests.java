package dev.distlock.redis;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.script.FairScripts;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisScriptingCommands;
import org.springframework.data.redis.connection.RedisSentinelConnection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A fair hand-over that reaches a waiter while one of its calls is counted in flight but not yet in Redis (a keepalive
 * queued on the call pool, or on the template path on a connection of its own): delivered at once, it let the caller
 * run and release before that call reached Redis, which then found the lock free and granted the same owner a second
 * lease that nobody knew of, held until its lease time (seen in CI as a {@code lock:{c1}} left after a fair method
 * returned). Here the waiter's keepalive is held in the client, before it is sent, while the holder releases: the
 * lease is delivered only once that call has been to Redis and back, and nothing is left after the release.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FairHandOverDuringCallIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private @Nullable RedisLockService closed;

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
		if (this.closed != null) {
			this.closed.close();
		}
	}

	@Test
	void aHandOverThatComesWhileAKeepaliveIsOnItsWayIsDeliveredAfterItAndLeavesNothingBehind() throws Exception {
		GatedScripts gate = new GatedScripts(this.support.connectionFactory(), FairScripts.FAIR_ACQUIRE.getSha1());
		// an entry ttl long enough that the held keepalive's entry outlives the hand-over (keepalives every 2 s)
		RedisLockService holder = this.support.service(
				RedisLockService.builder(this.support.connectionFactory()).fairEntryTtl(Duration.ofSeconds(6)));
		// the template path, so that every call of the waiter goes through the gate's connections
		RedisLockService waiter = RedisLockService.builder(gate).fairEntryTtl(Duration.ofSeconds(6))
			.paths(new EnginePaths(false, true)).build();
		this.closed = waiter;
		String key = "handed-during-call";
		String redisKey = holder.redisKey(key);
		Lease held = holder.tryAcquire(LockRequest.of(key, TTL, Duration.ZERO).fair()).orElseThrow();
		// the caller releases as soon as it has the lease, as a short critical section does
		Future<Lease> waiting = this.threads.submit(() -> {
			Lease lease = waiter.tryAcquire(LockRequest.of(key, TTL, Duration.ofSeconds(60)).fair()).orElseThrow();
			lease.release();
			return lease;
		});
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
			.until(() -> Long.valueOf(1).equals(this.server.execute("ZCARD", redisKey + ":q")));

		// the waiter's next keepalive is counted in flight and held before it is sent
		gate.closeForNextCall();
		assertThat(gate.held.await(20, TimeUnit.SECONDS)).as("a keepalive reached the gate").isTrue();
		held.release();
		// the release handed the lease to the waiter in Redis (it left the queue), and its message is on its way
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
			.until(() -> Long.valueOf(0).equals(this.server.execute("ZCARD", redisKey + ":q")));
		// not delivered while that keepalive has not been to Redis (before the fix: delivered by the message, and
		// released, within milliseconds)
		await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> !waiting.isDone());

		gate.open();
		Lease lease = waiting.get(30, TimeUnit.SECONDS);
		assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
		assertThat(gate.completed.get()).as("the held keepalive came back before the lease was delivered").isEqualTo(1);
		// before the fix the keepalive, sent after that release, took a second lease for the same owner here
		assertThat(LockTestSupport.leftKeys(this.server, redisKey + "*")).as("left in Redis after the release").isEmpty();
		assertThat(waiter.activeLeases()).isEmpty();
	}

	/**
	 * A connection factory that delivers every call, but holds the calls of one script (by digest) before they are
	 * sent while it is closed: a call the client counts in flight that has not reached Redis yet.
	 */
	static final class GatedScripts implements RedisConnectionFactory {

		private final RedisConnectionFactory delegate;

		private final byte[] sha;

		private final AtomicBoolean closed = new AtomicBoolean();

		private final CountDownLatch opened = new CountDownLatch(1);

		final CountDownLatch held = new CountDownLatch(1);

		final AtomicInteger completed = new AtomicInteger();

		GatedScripts(RedisConnectionFactory delegate, String sha) {
			this.delegate = delegate;
			this.sha = sha.getBytes(java.nio.charset.StandardCharsets.UTF_8);
		}

		/** Hold the next call of the script until {@link #open()}. */
		void closeForNextCall() {
			this.closed.set(true);
		}

		void open() {
			this.opened.countDown();
		}

		@Override
		public RedisConnection getConnection() {
			RedisConnection connection = this.delegate.getConnection();
			return (RedisConnection) Proxy.newProxyInstance(getClass().getClassLoader(),
					new Class<?>[] { RedisConnection.class }, gated(connection));
		}

		private InvocationHandler gated(Object target) {
			return (proxy, method, args) -> {
				if (method.getName().equals("scriptingCommands")) {
					Object scripting = invoke(target, method, args);
					return Proxy.newProxyInstance(getClass().getClassLoader(),
							new Class<?>[] { RedisScriptingCommands.class }, gated(scripting));
				}
				boolean gated = method.getName().equals("evalSha") && args != null && args.length == 4
						&& matches(args[0]);
				if (gated && this.closed.compareAndSet(true, false)) {
					this.held.countDown();
					if (!this.opened.await(60, TimeUnit.SECONDS)) {
						throw new IllegalStateException("the test never opened the gate");
					}
					Object reply = invoke(target, method, args);
					this.completed.incrementAndGet();
					return reply;
				}
				return invoke(target, method, args);
			};
		}

		private boolean matches(Object sha) {
			return (sha instanceof byte[] bytes) ? Arrays.equals(bytes, this.sha)
					: (sha instanceof String text) && Arrays.equals(
							text.getBytes(java.nio.charset.StandardCharsets.UTF_8), this.sha);
		}

		private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
			try {
				return method.invoke(target, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		}

		@Override
		public RedisClusterConnection getClusterConnection() {
			return this.delegate.getClusterConnection();
		}

		@Override
		public boolean getConvertPipelineAndTxResults() {
			return this.delegate.getConvertPipelineAndTxResults();
		}

		@Override
		public RedisSentinelConnection getSentinelConnection() {
			return this.delegate.getSentinelConnection();
		}

		@Override
		public DataAccessException translateExceptionIfPossible(RuntimeException ex) {
			return ((PersistenceExceptionTranslator) this.delegate).translateExceptionIfPossible(ex);
		}

	}

}
