package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.FaultProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The plain lock's directed wake-up (issue 31): a waiting process's note in the lease says since when it waits, the
 * release's message names the process whose note is the oldest, that process tries at once and the others hold back a
 * moment. Nothing is reserved in Redis: a named process with nobody left to try stalls nobody, a message of an older
 * version (a bare token) still wakes a waiter, and a note without an age (an older version's) is never named. Every
 * deadline is shorter than the holder's lease, so only a release message can end a wait in time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NamedReleaseIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	/** Shorter than {@link #TTL}: a waiter that missed the release would still be asleep. */
	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static final Duration WAIT = Duration.ofSeconds(25);

	private RedisClient pubSubClient;

	private final List<String> messages = new CopyOnWriteArrayList<>();

	@BeforeEach
	void client() {
		this.pubSubClient = RedisClient.create(RedisURI.create(this.server.host(), this.server.port()));
	}

	@AfterEach
	void shutdown() {
		this.pubSubClient.shutdown();
	}

	@Test
	void theReleaseNamesTheProcessThatHasWaitedLongestAndEveryWaiterGetsTheLock() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService first = this.support.service();
		RedisLockService second = this.support.service();
		listen(holder, "named");
		Lease held = holder.acquire("named", TTL, Duration.ZERO);
		CompletableFuture<Lease> firstWaiting = CompletableFuture.supplyAsync(() -> first.acquire("named", TTL, WAIT));
		long firstNote = awaitNote(holder, "named", first);
		// the second process starts to wait at a later millisecond of the server's clock
		await().atMost(DEADLINE).until(() -> serverMillis() > firstNote + 2);
		CompletableFuture<Lease> secondWaiting = CompletableFuture
			.supplyAsync(() -> second.acquire("named", TTL, WAIT));
		long secondNote = awaitNote(holder, "named", second);
		assertThat(secondNote).as("the later waiter's note").isGreaterThan(firstNote);
		awaitSubscribers(holder, "named", 3);

		held.release();

		await().atMost(DEADLINE).until(() -> this.messages.size() == 1);
		assertThat(this.messages).containsExactly(held.fencingToken() + LockScripts.NAMED_SEPARATOR + first.clientId());
		// which one gets in first is soft (a named process slower than the hold-back loses the race): both get in
		Object winner = CompletableFuture.anyOf(firstWaiting, secondWaiting).get(DEADLINE.toMillis(),
				TimeUnit.MILLISECONDS);
		Lease won = (Lease) winner;
		assertThat(won.fencingToken()).isGreaterThan(held.fencingToken());
		won.release();
		Lease other = ((won == firstWaiting.getNow(null)) ? secondWaiting : firstWaiting).get(DEADLINE.toMillis(),
				TimeUnit.MILLISECONDS);
		assertThat(other.fencingToken()).isGreaterThan(won.fencingToken());
		other.release();
		assertThat(this.server.execute("EXISTS", holder.redisKey("named"))).isEqualTo(0L);
	}

	@Test
	void aNamedProcessWithNobodyLeftToTryStallsNobody() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support.service();
		listen(holder, "ghost");
		Lease held = holder.acquire("ghost", TTL, Duration.ZERO);
		// a process that noted long ago and has gone (crashed, or its caller left) without a new note
		this.server.execute("HSET", holder.redisKey("ghost"), LockScripts.WAITER_PREFIX + "ghost", "1000");
		CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> waiter.acquire("ghost", TTL, WAIT));
		awaitNote(holder, "ghost", waiter);
		awaitSubscribers(holder, "ghost", 2);

		held.release();

		Lease lease = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(this.messages).containsExactly(held.fencingToken() + LockScripts.NAMED_SEPARATOR + "ghost");
		assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
		lease.release();
	}

	@Test
	void aMessageOfAnOlderVersionWakesAWaiterAndANoteWithoutAnAgeIsNeverNamed() throws Exception {
		RedisLockService waiter = this.support.service();
		String redisKey = waiter.redisKey("older");
		listen(waiter, "older");
		// a lease as an older version holds it, and its release: the key deleted, the bare token published
		this.server.execute("HSET", redisKey, "older-owner", "1", LockScripts.TOKEN_FIELD, "5");
		this.server.execute("PEXPIRE", redisKey, Long.toString(TTL.toMillis()));
		CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> waiter.acquire("older", TTL, WAIT));
		awaitNote(waiter, "older", waiter);
		awaitSubscribers(waiter, "older", 2);
		this.server.execute("DEL", redisKey);
		this.server.execute("PUBLISH", RedisLockService.channel(redisKey), "5");
		Lease lease = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);

		// an older version's note says that it waits but not since when: the release is announced, naming nobody
		this.server.execute("HSET", redisKey, LockScripts.WAITER_PREFIX + "older-client", "1");
		lease.release();
		await().atMost(DEADLINE).until(() -> this.messages.size() == 2);
		assertThat(this.messages).containsExactly("5", Long.toString(lease.fencingToken()));
	}

	@Test
	void aFailedAttemptRunTwiceKeepsTheEarliestNoteAndALaterAttemptNeverMakesItYounger() {
		RedisLockService holder = this.support.service();
		String redisKey = holder.redisKey("twice");
		Lease held = holder.acquire("twice", TTL, Duration.ZERO);
		String field = LockScripts.WAITER_PREFIX + "process-a";

		List<?> reply = attempt(redisKey, "owner-a", "process-a", "5000");
		assertThat(((Number) reply.get(0)).longValue()).as("not acquired").isZero();
		long noted = note(redisKey, field);
		assertThat(noted).as("the server's time less 5 s").isBetween(serverMillis() - 6_000, serverMillis() - 5_000);
		attempt(redisKey, "owner-a", "process-a", "5000"); // the same call again (a re-sent command)
		assertThat(note(redisKey, field)).isEqualTo(noted);
		attempt(redisKey, "owner-b", "process-a", ""); // a later attempt of a caller that has not waited
		assertThat(note(redisKey, field)).isEqualTo(noted);
		attempt(redisKey, "owner-c", "process-a", "600000"); // a caller of the process that waits longer
		assertThat(note(redisKey, field)).isLessThan(noted - 500_000);
		assertThat(this.server.execute("HEXISTS", redisKey, "owner-a")).as("a failed attempt holds nothing")
			.isEqualTo(0L);
		held.release();
	}

	@Test
	void aNamedReleaseWhoseReplyIsLostStillWakesTheNamedProcess() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server)) {
			LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port());
			try {
				RedisLockService holder = viaProxy.service();
				RedisLockService waiter = this.support.service();
				listen(waiter, "lost");
				Lease held = holder.acquire("lost", TTL, Duration.ZERO);
				CompletableFuture<Lease> waiting = CompletableFuture
					.supplyAsync(() -> waiter.acquire("lost", TTL, WAIT));
				awaitNote(waiter, "lost", waiter);
				awaitSubscribers(waiter, "lost", 2);

				proxy.dropReplies();
				try {
					held.release();
				}
				catch (RuntimeException unanswered) {
					// the release ran; only its reply was lost (or came from the receipt after a reconnect)
				}
				proxy.heal();

				Lease lease = waiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
				assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
				assertThat(this.messages).containsExactly(
						held.fencingToken() + LockScripts.NAMED_SEPARATOR + waiter.clientId());
				lease.release();
			}
			finally {
				viaProxy.close();
			}
		}
	}

	@Test
	void aWaitingAttemptWhoseReplyIsLostStillGetsTheLockAtTheRelease() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server)) {
			LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port());
			try {
				RedisLockService holder = this.support.service();
				RedisLockService waiter = viaProxy.service();
				Lease held = holder.acquire("lost-note", TTL, Duration.ZERO);
				waiter.acquire("warm-up", TTL, Duration.ZERO).release(); // its connection open before the fault
				proxy.dropReplies();
				CompletableFuture<Lease> waiting = CompletableFuture
					.supplyAsync(() -> waiter.acquire("lost-note", TTL, WAIT));
				// the attempt ran (its note is in the lease) though its reply never came
				awaitNote(holder, "lost-note", waiter);
				proxy.heal();
				// whether its channel is subscribed yet or not (then it polls), the release lets it in
				held.release();
				Lease lease = waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
				assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
				assertThat(lease.isOwned()).isTrue();
				lease.release();
				await().atMost(DEADLINE)
					.until(() -> Long.valueOf(0L).equals(this.server.execute("EXISTS", holder.redisKey("lost-note"))));
			}
			finally {
				viaProxy.close();
			}
		}
	}

	/** Run the acquire script as a caller of {@code process} that waited {@code waited} ms ('' for none). */
	private List<?> attempt(String redisKey, String owner, String process, String waited) {
		return this.support.template().execute(LockScripts.ACQUIRE, List.of(redisKey), owner,
				Long.toString(TTL.toMillis()), process, "", "", "", "", waited);
	}

	private long note(String redisKey, String field) {
		return Long.parseLong(String.valueOf(this.server.execute("HGET", redisKey, field)));
	}

	/** Wait for {@code waiting}'s note in the lease of {@code key}; returns its time. */
	private long awaitNote(RedisLockService service, String key, RedisLockService waiting) {
		String redisKey = service.redisKey(key);
		String field = LockScripts.WAITER_PREFIX + waiting.clientId();
		await().atMost(DEADLINE).until(() -> this.server.execute("HGET", redisKey, field) != null);
		return note(redisKey, field);
	}

	private long serverMillis() {
		List<?> time = (List<?>) this.server.execute("TIME");
		return Long.parseLong(String.valueOf(time.get(0))) * 1000 + Long.parseLong(String.valueOf(time.get(1))) / 1000;
	}

	/** Record every message on the release channel of {@code key}. */
	private void listen(RedisLockService service, String key) {
		String channel = RedisLockService.channel(service.redisKey(key));
		StatefulRedisPubSubConnection<String, String> listener = this.pubSubClient.connectPubSub();
		listener.addListener(new RedisPubSubAdapter<>() {

			@Override
			public void message(String from, String message) {
				NamedReleaseIntegrationTests.this.messages.add(message);
			}

		});
		listener.sync().subscribe(channel);
	}

	/** The release channel of {@code key} has {@code subscribers} subscribers on the server. */
	private void awaitSubscribers(RedisLockService service, String key, long subscribers) {
		String channel = RedisLockService.channel(service.redisKey(key));
		await().atMost(DEADLINE)
			.until(() -> List.of(channel, subscribers).equals(this.server.execute("PUBSUB", "NUMSUB", channel)));
	}

}
