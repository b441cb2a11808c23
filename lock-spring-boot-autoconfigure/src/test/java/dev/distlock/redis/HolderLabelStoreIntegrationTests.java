package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.StoredLock;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The holder label stored in the lease ({@code ~l:<owner>}, issue 29): another instance's {@code holder(key)}, the
 * store listing and a forced release name the holder by it, for every kind of lock; it is written once per hold (a
 * re-entry leaves it, a second run of the acquisition writes the same one), and leaves with its hold, so that a read
 * lock that overlapping readers hold forever does not grow.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HolderLabelStoreIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(60);

	private RedisLockService instance(String name) {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.holderApplication("inventory")
			.holderInstance(name));
	}

	private StringRedisTemplate template() {
		return new StringRedisTemplate(this.support.connectionFactory());
	}

	@Test
	void anotherInstanceSeesTheExclusiveHoldersLabel() {
		RedisLockService holder = instance("pod-1");
		RedisLockService operator = instance("pod-9");
		Lease lease = holder.acquire("order-7", TTL, Duration.ZERO);

		LockHolder held = operator.holder("order-7").orElseThrow();

		assertThat(held.holder()).isEqualTo(lease.holder().toString())
			.startsWith("inventory@pod-1 thread \"" + Thread.currentThread().getName());
		assertThat(operator.locks(null, 10).locks()).singleElement()
			.satisfies((lock) -> assertThat(lock.holder()).isEqualTo(lease.holder().toString()));
		assertThat(held.holder()).doesNotContain(lease.owner());
		lease.release();
	}

	@Test
	void aReadLockNamesBothReadersInTheOrderOfTheirLabelsAndAWriteLockItsWriter() throws Exception {
		RedisLockService first = instance("pod-2");
		RedisLockService second = instance("pod-1");
		RedisLockService operator = instance("pod-9");
		Lease reader = first.tryAcquire(LockRequest.of("report", TTL, Duration.ZERO).read()).orElseThrow();
		Lease otherReader = CompletableFuture
			.supplyAsync(() -> second.tryAcquire(LockRequest.of("report", TTL, Duration.ZERO).read()).orElseThrow())
			.get(30, TimeUnit.SECONDS);
		Lease writer = first.tryAcquire(LockRequest.of("ledger", TTL, Duration.ZERO).write()).orElseThrow();

		assertThat(operator.holder("report").map(LockHolder::holder))
			.hasValue(otherReader.holder() + "; " + reader.holder());
		assertThat(operator.holder("ledger").map(LockHolder::holder)).hasValue(writer.holder().toString());
		Map<String, StoredLock> listed = LockDirectoryIntegrationTests.byKey(operator);
		assertThat(listed.get("report").holder()).isEqualTo(otherReader.holder() + "; " + reader.holder());
		assertThat(listed.get("ledger").holder()).isEqualTo(writer.holder().toString());

		Optional<ForcedRelease> forced = operator.forceRelease("report");
		assertThat(forced).hasValueSatisfying((release) -> assertThat(release.holders())
			.containsExactlyInAnyOrder(reader.holder().toString(), otherReader.holder().toString()));
		assertThat(forced.get().toString()).contains(reader.holder().toString()).doesNotContain(reader.owner());
		writer.release();
	}

	@Test
	void aFairLeaseHandedOverToAWaiterOfAnotherInstanceNamesThatWaiter() throws Exception {
		RedisLockService holder = instance("pod-1");
		RedisLockService waiter = instance("pod-2");
		RedisLockService operator = instance("pod-9");
		Lease first = holder.tryAcquire(LockRequest.of("queue", TTL, Duration.ZERO).fair()).orElseThrow();
		CompletableFuture<Optional<Lease>> queued = waiter
			.tryAcquireAsync(LockRequest.of("queue", TTL, Duration.ofSeconds(30)).fair(), LockOwner.newOwner());
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.server.execute("ZCARD", "lock:{queue}:q").toString().equals("1"));
		assertThat(operator.holder("queue").map(LockHolder::holder)).hasValue(first.holder().toString());

		first.release();
		Lease handed = queued.get(30, TimeUnit.SECONDS).orElseThrow();

		assertThat(handed.holder().toString()).startsWith("inventory@pod-2 ");
		assertThat(operator.holder("queue").map(LockHolder::holder)).hasValue(handed.holder().toString());
		assertThat(template().opsForHash().keys("lock:{queue}:t")).isEmpty();
		handed.release();
	}

	@Test
	void aLeaseHandedOverInItsProcessNamesItsNewHolder() throws Exception {
		RedisLockService service = instance("pod-1");
		RedisLockService operator = instance("pod-9");
		Lease first = service.acquire("local", TTL, Duration.ZERO);
		CompletableFuture<Lease> next = CompletableFuture.supplyAsync(() -> {
			Thread.currentThread().setName("next-holder");
			return service.acquire("local", TTL, Duration.ofSeconds(30));
		});
		await().atMost(Duration.ofSeconds(20)).until(() -> service.waitingThreads() > 0);

		first.release();
		Lease second = next.get(30, TimeUnit.SECONDS);

		assertThat(second.holder().toString()).contains("next-holder");
		assertThat(operator.holder("local").map(LockHolder::holder)).hasValue(second.holder().toString());
		assertThat(labelFields("lock:{local}")).hasSize(1);
		second.release();
	}

	@Test
	void aReentryLeavesTheStoredLabelAsItIs() {
		RedisLockService service = instance("pod-1");
		Lease outer = service.acquire("twice", TTL, Duration.ZERO);
		List<String> fields = labelFields("lock:{twice}");
		assertThat(fields).singleElement().isEqualTo(LockScripts.LABEL_PREFIX + outer.owner());
		this.server.execute("HSET", "lock:{twice}", fields.get(0), "written by hand");

		Lease inner = service.acquire("twice", TTL, Duration.ZERO);

		assertThat(this.server.execute("HGET", "lock:{twice}", fields.get(0))).hasToString("written by hand");
		assertThat(service.holder("twice").map(LockHolder::holder)).hasValue("written by hand");
		inner.release();
		outer.release();
	}

	@Test
	void aSecondRunOfAnAcquisitionKeepsOneLabelAndAReleasedReadersLabelDoesNotComeBack() {
		StringRedisTemplate template = template();
		// the same acquisition delivered twice (a re-sent command): one hold, one label
		for (int run = 0; run < 2; run++) {
			template.execute(LockScripts.ACQUIRE, List.of("lock:{again}"), "client:1", "60000", "", "", "", "", "label 1");
		}
		assertThat(template.opsForHash().entries("lock:{again}")).containsEntry("client:1", "1")
			.containsEntry("~l:client:1", "label 1")
			.hasSize(3);
		// a reader's release delivered twice, the second after another reader came: its label stays gone
		List<?> first = template.execute(ReadWriteScripts.ACQUIRE, List.of("lock:{read}"), "client:r1", "60000", "r",
				"", "", "", "", "", "", "", "reader 1");
		template.execute(ReadWriteScripts.ACQUIRE, List.of("lock:{read}"), "client:r2", "60000", "r", "", "", "", "", "",
				"", "", "reader 2");
		String token = String.valueOf(first.get(1));
		for (int run = 0; run < 2; run++) {
			template.execute(ReadWriteScripts.RELEASE, List.of("lock:{read}"), "client:r1", token, "ch", "", "1",
					"1000");
		}
		assertThat(template.opsForHash().keys("lock:{read}")).doesNotContain("client:r1", "~l:client:r1")
			.contains("client:r2", "~l:client:r2");
		template.execute(ReadWriteScripts.ACQUIRE, List.of("lock:{read}"), "client:r2", "60000", "r", "", "", "", "", "",
				"", "", "reader 2");
		assertThat(template.opsForHash().get("lock:{read}", "~l:client:r2")).isEqualTo("reader 2");
	}

	@Test
	void aReadLockThatReadersHoldForeverKeepsOneLabelPerLiveReader() throws Exception {
		RedisLockService stays = instance("pod-1");
		RedisLockService comers = instance("pod-2");
		RedisLockService operator = instance("pod-9");
		Lease staying = stays.tryAcquire(LockRequest.of("catalog", TTL, Duration.ZERO).read()).orElseThrow();
		CompletableFuture.runAsync(() -> {
			for (int i = 0; i < 200; i++) {
				Thread.currentThread().setName("reader-" + i);
				comers.tryAcquire(LockRequest.of("catalog", TTL, Duration.ZERO).read()).orElseThrow().release();
			}
		}).get(60, TimeUnit.SECONDS);
		// readers that never release (their process died): pruned with their labels once their time is up
		List<Lease> dying = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			dying.add(comers.tryAcquire(LockRequest.of("catalog", Duration.ofMillis(300), Duration.ZERO).read()
				.withFixedLease()).orElseThrow());
		}
		Thread.sleep(400);
		comers.tryAcquire(LockRequest.of("catalog", TTL, Duration.ZERO).read()).orElseThrow().release();

		assertThat(((Number) this.server.execute("HLEN", "lock:{catalog}")).longValue()).isLessThanOrEqualTo(6);
		assertThat(labelFields("lock:{catalog}")).containsExactly(LockScripts.LABEL_PREFIX + staying.owner());
		assertThat(operator.holder("catalog").map(LockHolder::holder)).hasValue(staying.holder().toString());
		staying.release();
		dying.forEach((lease) -> {
			try {
				lease.release();
			}
			catch (RuntimeException lost) {
				// expired, as intended
			}
		});
	}

	@Test
	void anInstanceThatStoresNoLabelsLeavesTheHolderUnnamed() {
		RedisLockService quiet = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.holderInstance("pod-1")
			.storeHolderLabel(false));
		Lease lease = quiet.acquire("quiet", TTL, Duration.ZERO);
		Lease reader = quiet.tryAcquire(LockRequest.of("quiet-read", TTL, Duration.ZERO).read()).orElseThrow();

		assertThat(labelFields("lock:{quiet}")).isEmpty();
		assertThat(labelFields("lock:{quiet-read}")).isEmpty();
		assertThat(quiet.holder("quiet")).hasValueSatisfying((held) -> assertThat(held.holder()).isNull());
		assertThat(lease.holder().toString()).startsWith("application@pod-1 ");
		reader.release();
		lease.release();
	}

	private List<String> labelFields(String redisKey) {
		return template().opsForHash()
			.keys(redisKey)
			.stream()
			.map(String::valueOf)
			.filter((field) -> field.startsWith(LockScripts.LABEL_PREFIX))
			.toList();
	}

}
