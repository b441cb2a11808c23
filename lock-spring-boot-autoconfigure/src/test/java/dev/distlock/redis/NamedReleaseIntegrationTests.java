package dev.distlock.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.test.redis.FaultProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.core.StringRedisTemplate;

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
		// and carries the second's note over to it (its value may have moved by a ms: each attempt sends its wait)
		assertThat(this.messages).singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
			.startsWith(held.fencingToken() + LockScripts.NAMED_SEPARATOR + first.clientId()
					+ LockScripts.NAMED_SEPARATOR + second.clientId() + "=");
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
		assertThat(this.messages).singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
			.startsWith(held.fencingToken() + LockScripts.NAMED_SEPARATOR + "ghost" + LockScripts.NAMED_SEPARATOR
					+ waiter.clientId() + "=");
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

	@Test
	void theNamedReleaseCarriesTheOtherAgedNotesOldestFirstAtMostSixteen() {
		RedisLockService holder = this.support.service();
		String redisKey = holder.redisKey("carry");
		listen(holder, "carry");
		Lease held = holder.acquire("carry", TTL, Duration.ZERO);
		for (int i = 19; i >= 0; i--) { // written youngest first: the order in the hash is not the order of age
			this.server.execute("HSET", redisKey, LockScripts.WAITER_PREFIX + String.format("p%02d", i),
					Long.toString(10_000 + i * 10));
		}
		this.server.execute("HSET", redisKey, LockScripts.WAITER_PREFIX + "older-version", "1");
		this.server.execute("HSET", redisKey, LockScripts.WAITER_PREFIX + holder.clientId(), "500");

		held.release();

		await().atMost(DEADLINE).until(() -> this.messages.size() == 1);
		StringBuilder carried = new StringBuilder();
		for (int i = 1; i <= 16; i++) {
			carried.append((i > 1) ? "," : "").append(String.format("p%02d=%d", i, 10_000 + i * 10));
		}
		assertThat(this.messages).containsExactly(held.fencingToken() + LockScripts.NAMED_SEPARATOR + "p00"
				+ LockScripts.NAMED_SEPARATOR + carried);
	}

	@Test
	void anAcquireTakingAFreeKeyWritesTheCarriedNotesButNoneOfItsOwnProcessAndRunTwiceGivesTheSameHash() {
		String redisKey = this.support.service().redisKey("carried-free");
		String carried = "proc-b=1000,proc-a=900,proc-c=2000";

		List<?> first = carry(this.support.template(), redisKey, "proc-a:1", carried);
		assertThat(((Number) first.get(0)).longValue()).as("acquired").isEqualTo(1);
		Map<String, String> written = withoutToken(hash(redisKey));
		assertThat(written).containsExactlyInAnyOrderEntriesOf(Map.of("proc-a:1", "1",
				LockScripts.WAITER_PREFIX + "proc-b", "1000", LockScripts.WAITER_PREFIX + "proc-c", "2000"));

		List<?> second = carry(this.support.template(), redisKey, "proc-a:1", carried); // the same call again
		assertThat(((Number) second.get(0)).longValue()).as("one hold, adopted").isEqualTo(1);
		assertThat(withoutToken(hash(redisKey))).isEqualTo(written);
		assertThat(this.server.execute("PTTL", redisKey)).isInstanceOfSatisfying(Long.class,
				(ttl) -> assertThat(ttl).isPositive());
	}

	@Test
	void aFailedAttemptWritesTheCarriedNotesAtTheEarliestAndRunTwiceChangesNothing() {
		RedisLockService holder = this.support.service();
		String redisKey = holder.redisKey("carried-held");
		Lease held = holder.acquire("carried-held", TTL, Duration.ZERO);
		this.server.execute("HSET", redisKey, LockScripts.WAITER_PREFIX + "proc-b", "1500");
		this.server.execute("HSET", redisKey, LockScripts.WAITER_PREFIX + "proc-c", "1800");
		String carried = "proc-b=1000,proc-c=2000,proc-d=3000,proc-a=5";

		List<?> reply = carry(this.support.template(), redisKey, "proc-a:1", carried);
		assertThat(((Number) reply.get(0)).longValue()).as("not acquired").isZero();
		Map<String, String> written = hash(redisKey);
		assertThat(written).containsEntry(LockScripts.WAITER_PREFIX + "proc-b", "1000")
			.containsEntry(LockScripts.WAITER_PREFIX + "proc-c", "1800")
			.containsEntry(LockScripts.WAITER_PREFIX + "proc-d", "3000")
			.doesNotContainKey("proc-a:1");
		assertThat(Long.parseLong(written.get(LockScripts.WAITER_PREFIX + "proc-a"))).as("its own note, not the carried")
			.isGreaterThan(5);
		carry(this.support.template(), redisKey, "proc-a:1", carried);
		assertThat(hash(redisKey)).isEqualTo(written);
		held.release();
	}

	@Test
	void anAcquireWithCarriedNotesWhoseReplyIsLostAndThatIsSentAgainHoldsOnceWithTheNotes() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server)) {
			LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port());
			try {
				LeaseStore store = new LeaseStore(viaProxy.connectionFactory());
				String redisKey = this.support.service().redisKey("carried-lost");
				String carried = "proc-b=1000,proc-c=2000";
				long ttl = TTL.toMillis();
				store.acquire(redisKey + "-warm-up", "proc-a:0", ttl, "", 0, 0, ""); // connected before the fault
				proxy.dropReplies();
				try {
					store.acquire(redisKey, "proc-a:1", ttl, "proc-a", 0, 0, 0, "", carried);
				}
				catch (RuntimeException unanswered) {
					// it ran; only its reply was lost
				}
				await().atMost(DEADLINE).until(() -> this.server.execute("HGET", redisKey, "proc-a:1") != null);
				proxy.heal();
				long[] again = await().atMost(DEADLINE).ignoreExceptions()
					.until(() -> store.acquire(redisKey, "proc-a:1", ttl, "proc-a", 0, 0, 0, "", carried),
							(r) -> r != null);
				assertThat(again[0]).as("adopted: one hold").isEqualTo(1);
				assertThat(withoutToken(hash(redisKey))).containsExactlyInAnyOrderEntriesOf(Map.of("proc-a:1", "1",
						LockScripts.WAITER_PREFIX + "proc-b", "1000", LockScripts.WAITER_PREFIX + "proc-c", "2000"));
				assertThat(hash(redisKey)).containsEntry(LockScripts.TOKEN_FIELD, Long.toString(again[1]));
			}
			finally {
				viaProxy.close();
			}
		}
	}

	@Test
	void theNamedProcessTakesTheLockWithTheOthersNotesAndACarriedNoteOfAGoneProcessStallsNobody() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService named = this.support.service();
		RedisLockService later = this.support.service();
		String redisKey = holder.redisKey("carried");
		listen(holder, "carried");
		Lease held = holder.acquire("carried", TTL, Duration.ZERO);
		CompletableFuture<Lease> namedWaiting = CompletableFuture.supplyAsync(() -> named.acquire("carried", TTL, WAIT));
		long namedNote = awaitNote(holder, "carried", named);
		// a process that noted after it and has gone since: it never asks again
		String ghost = LockScripts.WAITER_PREFIX + "ghost";
		this.server.execute("HSET", redisKey, ghost, Long.toString(namedNote + 1));
		awaitSubscribers(holder, "carried", 2);

		held.release();

		Lease lease = namedWaiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		await().atMost(DEADLINE).until(() -> this.messages.size() == 1);
		assertThat(this.messages).containsExactly(held.fencingToken() + LockScripts.NAMED_SEPARATOR + named.clientId()
				+ LockScripts.NAMED_SEPARATOR + "ghost=" + (namedNote + 1));
		assertThat(this.server.execute("HGET", redisKey, ghost)).as("carried over into the named process's lease")
			.isEqualTo(Long.toString(namedNote + 1));
		assertThat(this.server.execute("HGET", redisKey, LockScripts.WAITER_PREFIX + named.clientId())).isNull();

		CompletableFuture<Lease> laterWaiting = CompletableFuture.supplyAsync(() -> later.acquire("carried", TTL, WAIT));
		awaitNote(holder, "carried", later);
		lease.release();

		// the gone process is named once, the later one held back a moment, and it gets the lock all the same
		Lease next = laterWaiting.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		await().atMost(DEADLINE).until(() -> this.messages.size() == 2);
		// its note's value may have moved by a ms (each attempt sends how long it has waited): only its place is sure
		assertThat(this.messages.get(1)).startsWith(lease.fencingToken() + LockScripts.NAMED_SEPARATOR + "ghost"
				+ LockScripts.NAMED_SEPARATOR + later.clientId() + "=");
		assertThat(this.server.execute("HGET", redisKey, ghost)).as("gone with the lease it was named from").isNull();
		next.release();
	}

	@Test
	void theNamedProcesssAttemptWithCarriedNotesRunTwiceHoldsOnceWithTheNotes() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server)) {
			LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port());
			try {
				RedisLockService holder = this.support.service();
				RedisLockService named = viaProxy.service();
				String redisKey = holder.redisKey("carried-twice");
				Lease held = holder.acquire("carried-twice", TTL, Duration.ZERO);
				CompletableFuture<Lease> waiting = CompletableFuture
					.supplyAsync(() -> named.acquire("carried-twice", TTL, WAIT));
				long namedNote = awaitNote(holder, "carried-twice", named);
				String ghost = LockScripts.WAITER_PREFIX + "ghost";
				this.server.execute("HSET", redisKey, ghost, Long.toString(namedNote + 1));
				awaitSubscribers(holder, "carried-twice", 1);

				// only the attempt the release's message starts carries the gone process's note
				proxy.redeliverNext("ghost=" + (namedNote + 1));
				held.release();

				Lease lease = waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
				assertThat(proxy.redeliveries()).isEqualTo(1);
				assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
				Map<String, String> hash = hash(redisKey);
				assertThat(hash.keySet().stream().filter((field) -> !field.startsWith("~")))
					.as("one owner, holding once").hasSize(1)
					.allSatisfy((owner) -> assertThat(hash.get(owner)).isEqualTo("1"));
				assertThat(hash).containsEntry(ghost, Long.toString(namedNote + 1))
					.doesNotContainKey(LockScripts.WAITER_PREFIX + named.clientId());
				assertThat(hash.get(LockScripts.TOKEN_FIELD)).isEqualTo(Long.toString(lease.fencingToken()));
				lease.release();
			}
			finally {
				viaProxy.close();
			}
		}
	}

	/** Run the acquire script for {@code owner} (of process 'proc-a', which will wait), carrying {@code carried}. */
	private List<?> carry(StringRedisTemplate template, String redisKey, String owner, String carried) {
		return template.execute(LockScripts.ACQUIRE, List.of(redisKey), owner, Long.toString(TTL.toMillis()), "proc-a",
				"", "", "", "", "", carried);
	}

	private Map<String, String> hash(String redisKey) {
		List<?> fields = (List<?>) this.server.execute("HGETALL", redisKey);
		Map<String, String> hash = new HashMap<>();
		for (int i = 0; i < fields.size(); i += 2) {
			hash.put(String.valueOf(fields.get(i)), String.valueOf(fields.get(i + 1)));
		}
		return hash;
	}

	private static Map<String, String> withoutToken(Map<String, String> hash) {
		Map<String, String> rest = new HashMap<>(hash);
		rest.remove(LockScripts.TOKEN_FIELD);
		return rest;
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
