package dev.distlock.preflight;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockAccessDeniedException.Reason;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.observability.LockMetrics;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * At run time, a refusal by Redis is told apart from an outage: a wrong password, a missing command permission, a
 * command refused inside the lock scripts and a missing channel permission each surface as what they are, on every
 * operation (acquire, release, extend, renew, isOwned, holder, force-release, the watchdog's renewals, subscribe),
 * naming what was refused and the ACL rule to grant; "did not answer" stays for servers that do not answer. A release
 * whose announcement Redis refuses is reported as the release it was.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class AccessDeniedIntegrationTests {

	private static final String PREFIX = "orders";

	private static final Duration DEADLINE = Duration.ofSeconds(15);

	/** Long enough that a failure which waited for it would be told from one that came at once. */
	private static final Duration LONG_WAIT = Duration.ofSeconds(20);

	private final SecuredRedis secured = new SecuredRedis();

	private final ExecutorService threads = Executors.newFixedThreadPool(3);

	private final List<String> refusals = new CopyOnWriteArrayList<>();

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final List<RedisLockService> services = new CopyOnWriteArrayList<>();

	private RedisServer redis;

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
	}

	@AfterEach
	void stop() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
		this.services.forEach(RedisLockService::close);
		this.secured.close();
		this.redis.close();
	}

	private RedisLockService service(String user, String password) {
		return service(this.secured.factory(this.redis, user, password));
	}

	private RedisLockService service(RedisConnectionFactory factory) {
		RedisLockService service = RedisLockService.builder(factory)
			.keyPrefix(PREFIX)
			.renewalRatio(0.1)
			.listener(new LockListener() {

				@Override
				public void notificationRefused(Notification operation, String channel, String reason) {
					AccessDeniedIntegrationTests.this.refusals.add(operation + " " + channel + ": " + reason);
				}

			})
			.listener(new LockMetrics(this.meters))
			.build();
		this.services.add(service);
		return service;
	}

	private static String aclWithout(String rule) {
		String acl = LockPreflight.minimalAcl(PREFIX);
		assertThat(acl).contains(" " + rule);
		return acl.replace(" " + rule, "");
	}

	private double refusedCount(String operation) {
		return this.meters.get(LockMetrics.NOTIFICATIONS_REFUSED).tag("operation", operation).counter().count();
	}

	@Test
	void withoutTheChannelPermissionReleasesSucceedAndWaitersPollAndBothRefusalsAreCounted(CapturedOutput output)
			throws Exception {
		SecuredRedis.createUser(this.redis, "nochannel", "pw", aclWithout("&" + PREFIX + ":*"));
		RedisLockService holder = service("nochannel", "pw");
		RedisLockService other = service("nochannel", "pw");

		// a waiter of another instance cannot subscribe: counted, logged at WARN with the rule, and it polls
		Lease held = holder.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = CompletableFuture
			.supplyAsync(() -> other.tryAcquire("sku-1", Duration.ofSeconds(5), LONG_WAIT), this.threads);
		await().atMost(DEADLINE).until(() -> refusedCount("subscribe") >= 1);
		assertThat(this.refusals).anySatisfy(refusal -> assertThat(refusal)
			.startsWith("SUBSCRIBE orders:{sku-1}:released: ")
			.contains("grant the application's Redis user &orders:*"));

		// the release's PUBLISH is refused: the release happened, so the holder is told nothing went wrong
		held.release();
		long released = System.nanoTime();
		assertThat(held.isHeld()).isFalse();
		assertThat(refusedCount("publish")).isEqualTo(1);
		assertThat(this.refusals).anySatisfy(refusal -> assertThat(refusal)
			.startsWith("PUBLISH orders:{sku-1}:released: ")
			.contains("&orders:*"));
		// the waiter polled: it got the lock long before the holder's 30 s lease could have run out (room for stalls)
		Lease next = waiting.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).orElseThrow();
		assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(10));

		// an operator's force-release deletes the lease too, its refused announcement counted
		var forced = holder.forceRelease("sku-1");
		assertThat(forced).isPresent();
		assertThat(forced.get().fencingToken()).isEqualTo(next.fencingToken());
		assertThat(this.redis.execute("EXISTS", "orders:{sku-1}")).isEqualTo(0L);
		assertThat(refusedCount("publish")).isEqualTo(2);

		assertThat(output).contains("WARN").contains("Released lock 'sku-1', but Redis refused to announce the release")
			.contains("Redis refused the subscription to orders:{sku-1}:released")
			.doesNotContain("did not answer");
	}

	/**
	 * With {@code +publish} refused but the channels allowed, waiters of another instance subscribe, and no release
	 * message can come: the holder's lease notes that its release will not be announced, and waiters that find it so
	 * poll instead of sleeping until the holder's lease time (20 s here, far beyond what a loaded machine takes).
	 */
	@Test
	void withoutPublishSubscribedWaitersOfAnotherInstancePollAndGetTheLockLongBeforeTheHoldersLeaseTime()
			throws Exception {
		assumeThat(this.redis.version()).as("Redis 6.2 cannot tell a script what the ACL allows (redis.acl_check_cmd)")
			.doesNotStartWith("6.");
		Duration holderTtl = Duration.ofSeconds(20);
		SecuredRedis.createUser(this.redis, "nopublish", "pw", aclWithout("+publish"));
		RedisLockService holder = service("nopublish", "pw");
		RedisLockService other = service("nopublish", "pw");
		Lease held = holder.acquire("sku-10", holderTtl, Duration.ZERO);
		Lease heldToo = holder.acquire("sku-11", holderTtl, Duration.ZERO);
		Lease written = holder.acquire(LockRequest.of("sku-12", holderTtl, Duration.ZERO).write());
		CompletableFuture<Optional<Lease>> waiting = CompletableFuture
			.supplyAsync(() -> other.tryAcquire("sku-10", Duration.ofSeconds(5), LONG_WAIT), this.threads);
		CompletableFuture<Optional<Lease>> waitingAsync = other
			.tryAcquireAsync(LockRequest.of("sku-11", Duration.ofSeconds(5), LONG_WAIT), LockOwner.newOwner());
		LockRequest read = LockRequest.of("sku-12", Duration.ofSeconds(5), LONG_WAIT).read();
		CompletableFuture<Optional<Lease>> reading = CompletableFuture.supplyAsync(() -> other.tryAcquire(read),
				this.threads);
		// the waiters subscribed: a release message could reach them, if it were sent
		await().atMost(DEADLINE).until(() -> subscribers("orders:{sku-10}:released") == 1
				&& subscribers("orders:{sku-11}:released") == 1 && subscribers("orders:{sku-12}:released") == 1);
		assertThat(this.refusals).noneMatch(refusal -> refusal.startsWith("SUBSCRIBE"));

		held.release();
		heldToo.release();
		written.release();
		long released = System.nanoTime();
		assertThat(refusedCount("publish")).isEqualTo(3);
		List<Lease> next = List.of(waiting.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).orElseThrow(),
				waitingAsync.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).orElseThrow(),
				reading.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).orElseThrow());
		assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(holderTtl.dividedBy(2));
		next.forEach(Lease::release);
	}

	private long subscribers(String channel) {
		List<?> reply = (List<?>) this.redis.execute("PUBSUB", "NUMSUB", channel);
		return (Long) reply.get(1);
	}

	@Test
	void aMissingEvalshaFailsTheAcquisitionAtOnceNamingTheCommandAndTheRule() {
		SecuredRedis.createUser(this.redis, "noevalsha", "pw", aclWithout("+evalsha"));
		RedisLockService service = service("noevalsha", "pw");
		long start = System.nanoTime();
		LockAccessDeniedException denied = catchThrowableOfType(LockAccessDeniedException.class,
				() -> service.acquire("sku-2", Duration.ofSeconds(5), LONG_WAIT));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not retried within the wait")
			.isLessThan(LONG_WAIT.dividedBy(2));
		assertThat(denied.getKey()).isEqualTo("sku-2");
		assertThat(denied.getReason()).isEqualTo(Reason.PERMISSION);
		assertThat(denied.getGrant()).isEqualTo("+evalsha");
		assertThat(denied).hasMessageStartingWith("Could not acquire lock 'sku-2': Redis's ACL refused the 'evalsha' "
				+ "command; grant the application's Redis user +evalsha")
			.hasMessageNotContaining("did not answer")
			.hasMessageNotContaining("ExecutionException")
			.hasCauseInstanceOf(DataAccessException.class);
		assertThat(denied).isInstanceOf(LockUnavailableException.class);
	}

	/**
	 * Redis 7.0 does not name a command it refuses inside a script, only the script's SHA1 and line: the grant is the
	 * command that line of the engine's script calls, not the whole minimal ACL.
	 */
	@Test
	void aCommandRefusedInsideTheScriptsIsNamedWithItsRuleAndLeavesNoHoldBehind() {
		// PEXPIRE comes after the HSET that creates a new lease: the script's write stays when PEXPIRE is refused
		SecuredRedis.createUser(this.redis, "nopexpire", "pw", aclWithout("+pexpire"));
		RedisLockService service = service("nopexpire", "pw");
		LockAccessDeniedException denied = catchThrowableOfType(LockAccessDeniedException.class,
				() -> service.acquire("sku-3", Duration.ofSeconds(5), LONG_WAIT));
		assertThat(denied.getReason()).isEqualTo(Reason.PERMISSION);
		assertThat(denied.getGrant()).isEqualTo("+pexpire");
		assertThat(denied).hasMessageStartingWith("Could not acquire lock 'sku-3': Redis's ACL refused the 'pexpire' "
				+ "command inside the lock scripts; grant the application's Redis user +pexpire")
			.hasMessageNotContaining("did not answer");
		// the hold that the refused script left without an expiry is deleted, as any hold of a failed acquisition
		await().atMost(DEADLINE).until(() -> Long.valueOf(0).equals(this.redis.execute("EXISTS", "orders:{sku-3}")));
	}

	@Test
	void eachCommandRefusedInsideTheScriptsIsNamedWithItsRule() {
		SecuredRedis.createUser(this.redis, "notime", "pw", aclWithout("+time"));
		LockAccessDeniedException time = catchThrowableOfType(LockAccessDeniedException.class,
				() -> service("notime", "pw").acquire("sku-7", Duration.ofSeconds(5), LONG_WAIT));
		assertThat(time.getGrant()).isEqualTo("+time");
		assertThat(time)
			.hasMessageStartingWith("Could not acquire lock 'sku-7': Redis's ACL refused the 'time' command");

		// a release that HGETALL is refused to
		SecuredRedis.createUser(this.redis, "nohgetall", "pw", aclWithout("+hgetall"));
		Lease lease = service("nohgetall", "pw").acquire("sku-8", Duration.ofSeconds(5), Duration.ZERO);
		LockAccessDeniedException hgetall = catchThrowableOfType(LockAccessDeniedException.class, lease::release);
		assertThat(hgetall.getGrant()).isEqualTo("+hgetall");
		assertThat(hgetall).hasMessageStartingWith("Could not release lock 'sku-8': Redis's ACL refused the 'hgetall' "
				+ "command inside the lock scripts; grant the application's Redis user +hgetall");

		// a fair lock's queue, which a waiter of another instance joins
		SecuredRedis.createUser(this.redis, "nozadd", "pw", aclWithout("+zadd"));
		Lease fair = service("nozadd", "pw").tryAcquire(LockRequest.of("sku-9", Duration.ofSeconds(5), Duration.ZERO)
			.fair()).orElseThrow();
		RedisLockService other = service("nozadd", "pw");
		LockAccessDeniedException zadd = catchThrowableOfType(LockAccessDeniedException.class,
				() -> other.tryAcquire(LockRequest.of("sku-9", Duration.ofSeconds(5), LONG_WAIT).fair()));
		assertThat(zadd).as("the fair waiter that Redis refuses to queue").isNotNull();
		assertThat(zadd.getGrant()).isEqualTo("+zadd");
		fair.release();
	}

	@Test
	void everyOperationOnAHeldLeaseSaysWhatWasRefusedOnceTheUserLosesAPermission() {
		SecuredRedis.createUser(this.redis, "revoked", "pw", LockPreflight.minimalAcl(PREFIX));
		RedisLockService service = service("revoked", "pw");
		// 6 s: the operations below still find the lease held after a loaded machine's stall (issue 32)
		Lease lease = service.acquire("sku-4", Duration.ofSeconds(6), Duration.ZERO);
		this.redis.execute("ACL", "SETUSER", "revoked", "-evalsha");

		// the watchdog's renewals (every 600 ms) fail, and the health details say why, in words
		await().atMost(DEADLINE).until(() -> service.renewalStatus().isFailing());
		assertThat(service.renewalStatus().lastError()).startsWith("Redis's ACL refused the 'evalsha' command")
			.contains("+evalsha")
			.doesNotContain("Exception");

		assertDenied(() -> lease.extend(Duration.ofSeconds(5)), "Could not extend lock 'sku-4'");
		assertDenied(lease::renew, "Could not renew lock 'sku-4'");
		assertDenied(lease::isOwned, "Could not check the ownership of lock 'sku-4'");
		assertDenied(() -> service.holder("sku-4"), "Could not ask who holds lock 'sku-4'");
		assertDenied(() -> service.forceRelease("sku-4"), "Could not force-release lock 'sku-4'");
		LockAccessDeniedException release = assertDenied(lease::release, "Could not release lock 'sku-4'");
		assertThat(release).hasMessageContaining("the lease expires within 6000ms");
	}

	private static LockAccessDeniedException assertDenied(Runnable call, String start) {
		LockAccessDeniedException denied = catchThrowableOfType(LockAccessDeniedException.class, call::run);
		assertThat(denied).as(start).isNotNull()
			.hasMessageStartingWith(start + ": Redis's ACL refused the 'evalsha' command")
			.hasCauseInstanceOf(DataAccessException.class);
		assertThat(denied.getGrant()).isEqualTo("+evalsha");
		return denied;
	}

	@Test
	void aWrongPasswordIsACredentialsFailureNotAnOutage() {
		SecuredRedis.createUser(this.redis, "app", "right", LockPreflight.minimalAcl(PREFIX));
		RedisLockService service = service("app", "wrong");
		long start = System.nanoTime();
		LockAccessDeniedException denied = catchThrowableOfType(LockAccessDeniedException.class,
				() -> service.acquire("sku-5", Duration.ofSeconds(5), LONG_WAIT));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(LONG_WAIT.dividedBy(2));
		assertThat(denied.getReason()).isEqualTo(Reason.CREDENTIALS);
		assertThat(denied.getGrant()).isNull();
		assertThat(denied).hasMessageStartingWith("Could not acquire lock 'sku-5': Redis refused the application's "
				+ "credentials; set spring.data.redis.username and spring.data.redis.password")
			.hasMessageContaining("WRONGPASS")
			.hasMessageNotContaining("did not answer");
	}

	@Test
	void aServerThatDoesNotAnswerStillDidNotAnswer() {
		RedisServer stopped = RedisServer.start();
		RedisConnectionFactory factory = this.secured.factory(stopped, null, null);
		RedisLockService service = service(factory);
		stopped.close();
		LockUnavailableException unavailable = catchThrowableOfType(LockUnavailableException.class,
				() -> service.acquire("sku-6", Duration.ofSeconds(5), Duration.ZERO));
		assertThat(unavailable).isNotInstanceOf(LockAccessDeniedException.class)
			.hasMessageStartingWith("Could not acquire lock 'sku-6': Redis did not answer");
	}

}
