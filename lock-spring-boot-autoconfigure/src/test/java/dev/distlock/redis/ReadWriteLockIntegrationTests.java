package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Read-write locks on the Redis engine (issue 15): many readers or one writer, re-entry per mode, downgrade, upgrade
 * refused at once, writers not starved by readers, each mode renewed, tokens growing with every writer, and nothing
 * left in Redis once free.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadWriteLockIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	private static LockRequest read(String key) {
		return LockRequest.of(key, TTL, WAIT).read();
	}

	private static LockRequest write(String key) {
		return LockRequest.of(key, TTL, WAIT).write();
	}

	private static Lease acquire(RedisLockService service, LockRequest request) {
		return service.tryAcquire(request).orElseThrow(() -> new AssertionError("not acquired: " + request));
	}

	@Test
	void readersOfTwoInstancesHoldAtOnce() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service());
		CountDownLatch allInside = new CountDownLatch(6);
		List<Future<Long>> readers = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			RedisLockService service = services.get(i % 2);
			readers.add(this.threads.submit(() -> {
				try (Lease lease = acquire(service, read("shared"))) {
					allInside.countDown();
					// every reader is inside before any leaves: only possible if they hold at once
					assertThat(allInside.await(30, TimeUnit.SECONDS)).isTrue();
					return lease.fencingToken();
				}
			}));
		}
		List<Long> tokens = new ArrayList<>();
		for (Future<Long> reader : readers) {
			tokens.add(reader.get(60, TimeUnit.SECONDS));
		}
		assertThat(tokens).allMatch(token -> token > 0);
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void aWriterExcludesReadersAndWritersOfEveryInstance() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service());
		StringRedisTemplate data = this.support.template();
		data.opsForValue().set("a", "0");
		data.opsForValue().set("b", "0");
		int writesPerThread = 40;
		List<long[]> writes = new CopyOnWriteArrayList<>(); // {value written, token}
		AtomicBoolean torn = new AtomicBoolean();
		AtomicInteger reads = new AtomicInteger();
		AtomicBoolean writing = new AtomicBoolean(true);
		List<Future<?>> all = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			RedisLockService service = services.get(i % 2);
			all.add(this.threads.submit(() -> {
				for (int n = 0; n < writesPerThread; n++) {
					try (Lease lease = acquire(service, write("counter"))) {
						long a = Long.parseLong(data.opsForValue().get("a"));
						data.opsForValue().set("a", Long.toString(a + 1));
						data.opsForValue().set("b", Long.toString(a + 1));
						writes.add(new long[] { a + 1, lease.fencingToken() });
					}
				}
				return null;
			}));
		}
		List<Future<?>> readers = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			RedisLockService service = services.get(i % 2);
			readers.add(this.threads.submit(() -> {
				while (writing.get()) {
					try (Lease lease = acquire(service, read("counter"))) {
						if (!data.opsForValue().get("a").equals(data.opsForValue().get("b"))) {
							torn.set(true);
						}
						reads.incrementAndGet();
					}
				}
				return null;
			}));
		}
		for (Future<?> writer : all) {
			writer.get(90, TimeUnit.SECONDS);
		}
		writing.set(false);
		for (Future<?> reader : readers) {
			reader.get(30, TimeUnit.SECONDS);
		}
		assertThat(data.opsForValue().get("a")).isEqualTo(Integer.toString(4 * writesPerThread));
		assertThat(torn).as("a read saw a write half done").isFalse();
		assertThat(reads.get()).isPositive();
		// the fencing token grows with every writer, in the order of their writes
		List<long[]> ordered = new ArrayList<>(writes);
		ordered.sort((x, y) -> Long.compare(x[0], y[0]));
		for (int i = 1; i < ordered.size(); i++) {
			assertThat(ordered.get(i)[1]).as("token of write %d", i + 1).isGreaterThan(ordered.get(i - 1)[1]);
		}
		data.delete(List.of("a", "b"));
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void aWaitingWriterKeepsNewReadersOutAndGetsTheLockWhenTheReadersLeave() throws Exception {
		RedisLockService readers = this.support.service();
		RedisLockService writers = this.support.service();
		String key = readers.redisKey("queued");
		Lease reader = acquire(readers, read("queued"));
		Future<Lease> writer = this.threads.submit(() -> acquire(writers, write("queued")));
		await().atMost(Duration.ofSeconds(20)).until(() -> fields(key).stream().anyMatch(f -> f.startsWith("~q:")));
		// a new reader is refused while the writer waits, whatever instance it runs in
		assertRefusedWhileTheWriterWaits(key,
				() -> this.threads.submit(() -> readers.tryAcquire(LockRequest.of("queued", TTL, Duration.ZERO).read()))
					.get(20, TimeUnit.SECONDS));
		assertRefusedWhileTheWriterWaits(key, () -> writers.tryAcquire(LockRequest.of("queued", TTL, Duration.ZERO).read()));
		// the reader's own re-entry is not a new reader
		Lease again = acquire(readers, read("queued"));
		assertThat(again.fencingToken()).isEqualTo(reader.fencingToken());
		assertThat(writer).isNotDone();
		again.release();
		reader.release();
		Lease written = writer.get(20, TimeUnit.SECONDS);
		assertThat(written.fencingToken()).isGreaterThan(reader.fencingToken());
		assertThat(fields(key)).noneMatch(f -> f.startsWith("~q:"));
		written.release();
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void aStreamOfReadersDoesNotStarveAWriter() throws Exception {
		List<RedisLockService> services = List.of(this.support.service(), this.support.service());
		AtomicBoolean reading = new AtomicBoolean(true);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger maxInside = new AtomicInteger();
		List<Future<?>> readers = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			RedisLockService service = services.get(i % 2);
			readers.add(this.threads.submit(() -> {
				while (reading.get()) {
					try (Lease lease = acquire(service, LockRequest.of("stream", TTL, Duration.ofSeconds(60)).read())) {
						maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the reader's work
						inside.decrementAndGet();
					}
				}
				return null;
			}));
		}
		// the readers overlap: the lock is never free while they stream
		await().atMost(Duration.ofSeconds(20)).until(() -> maxInside.get() >= 2);
		long start = System.nanoTime();
		Lease written = acquire(services.get(0), LockRequest.of("stream", TTL, Duration.ofSeconds(60)).write());
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		assertThat(inside.get()).as("readers inside while the writer holds").isZero();
		written.release();
		reading.set(false);
		for (Future<?> reader : readers) {
			reader.get(30, TimeUnit.SECONDS);
		}
		assertThat(waited).as("the writer's wait, well below its 60s").isLessThan(Duration.ofSeconds(15));
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void eachModeIsReentrantAndAWriterMayDowngrade() throws Exception {
		RedisLockService service = this.support.service();
		RedisLockService other = this.support.service();
		String key = service.redisKey("down");
		Lease write = acquire(service, write("down"));
		Lease writeAgain = acquire(service, write("down"));
		assertThat(writeAgain.fencingToken()).isEqualTo(write.fencingToken());
		Lease read = acquire(service, read("down"));
		Lease readAgain = acquire(service, read("down"));
		assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
		assertThat(read.owner()).isNotEqualTo(write.owner());
		assertThat(server.execute("HGET", key, write.owner())).isEqualTo("2");
		assertThat(server.execute("HGET", key, read.owner())).isEqualTo("2");
		assertThat(service.activeLeases()).extracting(LeaseSnapshot::mode)
			.containsExactlyInAnyOrder(LockMode.WRITE, LockMode.READ);
		// while the writer holds, nobody else reads
		assertThat(other.tryAcquire(LockRequest.of("down", TTL, Duration.ZERO).read())).isEmpty();
		writeAgain.release();
		write.release();
		// the write lock released first: the downgrade reads on, and others may read beside it, not write
		Lease otherRead = acquire(other, LockRequest.of("down", TTL, Duration.ZERO).read());
		assertThat(otherRead.fencingToken()).isEqualTo(write.fencingToken());
		assertThat(this.threads.submit(() -> other.tryAcquire(LockRequest.of("down", TTL, Duration.ZERO).write()))
			.get(20, TimeUnit.SECONDS)).isEmpty();
		// the downgraded owner is a reader now: asking for the write lock is an upgrade
		assertThatIllegalStateException().isThrownBy(() -> service.tryAcquire(write("down")))
			.withMessageContaining("holds the read lock of 'down' and asked for its write lock");
		readAgain.release();
		read.release();
		otherRead.release();
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();

		// the other order: the read lock released before the write lock
		Lease write2 = acquire(service, write("down"));
		assertThat(write2.fencingToken()).isGreaterThan(write.fencingToken());
		Lease read2 = acquire(service, read("down"));
		read2.release();
		assertThat(other.tryAcquire(LockRequest.of("down", TTL, Duration.ZERO).read())).isEmpty();
		write2.release();
		Lease afterwards = acquire(other, LockRequest.of("down", TTL, Duration.ZERO).write());
		assertThat(afterwards.fencingToken()).isGreaterThan(write2.fencingToken());
		afterwards.release();
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void anUpgradeFailsAtOnceNamingTheKey() throws Exception {
		RedisLockService service = this.support.service();
		Lease read = acquire(service, read("upgrade"));
		long start = System.nanoTime();
		assertThatIllegalStateException().isThrownBy(() -> service.tryAcquire(write("upgrade")))
			.withMessage(LockOwner.current() + " holds the read lock of 'upgrade' and asked for its write lock: "
					+ "upgrading would deadlock; release the read lock first");
		LockOwner owner = LockOwner.newOwner();
		Lease asyncRead = service.tryAcquireAsync(read("upgrade2"), owner).get(20, TimeUnit.SECONDS).orElseThrow();
		CompletableFuture<Optional<Lease>> asyncWrite = service.tryAcquireAsync(write("upgrade2"), owner);
		assertThat(asyncWrite).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(java.util.concurrent.ExecutionException.class)
			.withCauseInstanceOf(IllegalStateException.class);
		// at once: far below the 30 s wait of both requests, with room for a loaded machine's stalls
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
		// another owner's write is no upgrade: it waits for the reader, as usual
		assertThat(this.threads.submit(() -> service.tryAcquire(LockRequest.of("upgrade", TTL, Duration.ZERO).write()))
			.get(20, TimeUnit.SECONDS)).isEmpty();
		read.release();
		asyncRead.releaseAsync().get(20, TimeUnit.SECONDS);
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void asynchronousReadersShareAndAnAsynchronousWriterWaitsForThem() throws Exception {
		RedisLockService service = this.support.service();
		Lease first = service.tryAcquireAsync(read("async"), LockOwner.newOwner()).get(20, TimeUnit.SECONDS).orElseThrow();
		Lease second = service.tryAcquireAsync(read("async"), LockOwner.newOwner()).get(20, TimeUnit.SECONDS)
			.orElseThrow();
		CompletableFuture<Optional<Lease>> writer = service.tryAcquireAsync(write("async"), LockOwner.newOwner());
		await().atMost(Duration.ofSeconds(20))
			.until(() -> fields(service.redisKey("async")).stream().anyMatch(f -> f.startsWith("~q:")));
		first.releaseAsync().get(20, TimeUnit.SECONDS);
		assertThat(writer).isNotDone();
		second.releaseAsync().get(20, TimeUnit.SECONDS);
		Lease written = writer.get(20, TimeUnit.SECONDS).orElseThrow();
		assertThat(written.fencingToken()).isGreaterThan(second.fencingToken());
		written.releaseAsync().get(20, TimeUnit.SECONDS);
		assertThat(LockTestSupport.leftKeys(server)).isEmpty();
	}

	@Test
	void theWatchdogRenewsEachModeAndADeadReaderEndsAtItsTtl() throws Exception {
		List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
		LockListener listener = new LockListener() {
			@Override
			public void lost(LockLostEvent event) {
				lost.add(event);
			}
		};
		RedisLockService live = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS)
			.listener(listener));
		RedisLockService dying = this.support.quicklyRenewingService();
		RedisLockService writers = this.support.service();
		warmUp(live, dying, writers);
		// renewed every 600 ms, these leases survive stalls of 5 s (a 1 s lease was lost to one in CI, issue 32)
		Duration ttl = LockTestSupport.RENEWED_TTL;
		String key = live.redisKey("renewed");
		Lease liveReader = acquire(live, LockRequest.of("renewed", ttl, Duration.ZERO).read());
		Lease deadReader = acquire(dying, LockRequest.of("renewed", ttl, Duration.ZERO).read());
		Lease writer = acquire(live, LockRequest.of("renewed-w", ttl, Duration.ZERO).write());
		long liveDeadline = deadline(key, liveReader);
		long deadDeadline = deadline(key, deadReader);
		long writerDeadline = deadline(live.redisKey("renewed-w"), writer);
		// both modes live past the deadline their acquisition set, through renewals: Redis shows each hold's deadline
		// moved on, whenever the renewals came
		LockTestSupport.awaitRenewal(live, liveReader);
		LockTestSupport.awaitRenewal(dying, deadReader);
		LockTestSupport.awaitRenewal(live, writer);
		assertThat(deadline(key, liveReader)).isGreaterThan(liveDeadline);
		assertThat(deadline(key, deadReader)).isGreaterThan(deadDeadline);
		assertThat(deadline(live.redisKey("renewed-w"), writer)).isGreaterThan(writerDeadline);
		assertThat(liveReader.isOwned()).isTrue();
		assertThat(deadReader.isOwned()).isTrue();
		assertThat(writer.isOwned()).isTrue();
		// an instance that dies stops renewing: its reader's hold ends at its ttl, the live reader's stays
		dying.close();
		Future<Lease> waitingWriter = this.threads.submit(() -> acquire(writers,
				LockRequest.of("renewed", TTL, Duration.ofSeconds(60)).write()));
		// the dead hold's deadline is at most one ttl away; the deadline leaves room for a loaded machine's stalls
		await().atMost(ttl.plusSeconds(30)).until(() -> !fields(key).contains(deadReader.owner()));
		assertThat(fields(key)).contains(liveReader.owner());
		assertThat(liveReader.isOwned()).isTrue();
		assertThat(waitingWriter).isNotDone();
		liveReader.release();
		Lease next = waitingWriter.get(20, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isGreaterThan(liveReader.fencingToken());
		next.release();
		// a hold found gone by its renewal is lost, as for an exclusive lease
		server.execute("HDEL", live.redisKey("renewed-w"), writer.owner());
		await().atMost(Duration.ofSeconds(20)).until(() -> !lost.isEmpty());
		assertThat(lost).singleElement().satisfies(event -> {
			assertThat(event.key()).isEqualTo("renewed-w");
			assertThat(event.owner()).isEqualTo(writer.owner());
		});
		assertThat(writer.isLost()).isTrue();
		await().atMost(Duration.ofSeconds(20)).until(() -> LockTestSupport.leftKeys(server).isEmpty());
	}

	@Test
	void bothRedisPathsExtendRenewAndReleaseEachModeBesideAnExclusiveLease() throws Exception {
		for (boolean nativeScripts : new boolean[] { true, false }) {
			this.support.paths(new EnginePaths(nativeScripts, true));
			RedisLockService service = this.support.quicklyRenewingService();
			RedisLockService other = this.support.quicklyRenewingService();
			warmUp(service, other);
			String name = "paths-" + nativeScripts;
			String key = service.redisKey(name);
			// renewed every 600 ms, these leases survive stalls of 5 s (a 1 s lease was lost to one in CI, issue 32)
			Duration ttl = LockTestSupport.RENEWED_TTL;
			Lease write = acquire(service, LockRequest.of(name, ttl, Duration.ZERO).write());
			Lease read = acquire(service, LockRequest.of(name, ttl, Duration.ZERO).read());
			write.extend(Duration.ofSeconds(60));
			assertThat(deadline(key, write)).isGreaterThan(deadline(key, read) + 50_000);
			write.release();
			Lease otherRead = this.threads.submit(() -> acquire(other, LockRequest.of(name, ttl, Duration.ZERO).read()))
				.get(20, TimeUnit.SECONDS);
			// an exclusive lease renewed in the same rounds: its renewals go in a batch of their own
			Lease exclusive = acquire(service, LockRequest.of(name + "-x", ttl, Duration.ZERO));
			long readDeadline = deadline(key, read);
			long otherDeadline = deadline(key, otherRead);
			long exclusiveExpiry = expiryTime(service.redisKey(name + "-x"));
			LockTestSupport.awaitRenewal(service, read);
			LockTestSupport.awaitRenewal(other, otherRead);
			LockTestSupport.awaitRenewal(service, exclusive);
			// each renewed in Redis, past the deadline its acquisition set
			assertThat(deadline(key, read)).as("renewed read hold, native %s", nativeScripts).isGreaterThan(readDeadline);
			assertThat(deadline(key, otherRead)).isGreaterThan(otherDeadline);
			assertThat(expiryTime(service.redisKey(name + "-x"))).isGreaterThan(exclusiveExpiry);
			assertThat(read.isOwned()).as("renewed read hold, native %s", nativeScripts).isTrue();
			assertThat(otherRead.isOwned()).isTrue();
			assertThat(exclusive.isOwned()).isTrue();
			exclusive.release();
			// a replace, shorter than the lease time, is the lease time the watchdog renews to from then on
			read.extend(Duration.ofSeconds(3), dev.distlock.core.ExtendMode.REPLACE);
			assertThat(service.activeLeases()).filteredOn(snapshot -> snapshot.owner().equals(read.owner()))
				.singleElement()
				.satisfies(snapshot -> assertThat(snapshot.ttl()).isEqualTo(Duration.ofSeconds(3)));
			read.release();
			otherRead.release();
			assertThat(LockTestSupport.leftKeys(server)).isEmpty();
		}
	}

	/**
	 * Assert that {@code newReader} is refused while the waiting writer's note ({@code ~q:<owner>}) is live. The note
	 * lasts 2 s from the writer's last attempt, which refreshes it every 667 ms: a stall of the writer's thread on a
	 * loaded machine can let it lapse, and then a reader may enter, rightly. So the note's deadline (the server's
	 * clock) is read before the call: a reader that entered before it fails the test; one that may have entered after
	 * it leaves, and the check is made again.
	 */
	private void assertRefusedWhileTheWriterWaits(String redisKey, java.util.concurrent.Callable<Optional<Lease>> newReader)
			throws Exception {
		for (int attempt = 0; attempt < 10; attempt++) {
			await().atMost(Duration.ofSeconds(20)).until(() -> fields(redisKey).stream().anyMatch(f -> f.startsWith("~q:")));
			long note = fields(redisKey).stream()
				.filter(f -> f.startsWith("~q:"))
				.mapToLong(f -> Long.parseLong(String.valueOf(server.execute("HGET", redisKey, f))))
				.max()
				.orElse(0);
			Optional<Lease> entered = newReader.call();
			if (entered.isEmpty()) {
				return;
			}
			long after = serverTimeMillis();
			entered.get().release();
			assertThat(after).as("the server's time (ms) after a new reader entered: past the deadline %d of the waiting "
					+ "writer's note it saw before", note).isGreaterThanOrEqualTo(note);
		}
		throw new AssertionError("a new reader entered ten times, each time when the waiting writer's note may have lapsed");
	}

	private long serverTimeMillis() {
		List<?> time = (List<?>) server.execute("TIME");
		return Long.parseLong(String.valueOf(time.get(0))) * 1000 + Long.parseLong(String.valueOf(time.get(1))) / 1000;
	}

	/** The deadline of {@code lease}'s hold in Redis: the server's clock in ms ({@code ~e:<owner>}). */
	private long deadline(String redisKey, Lease lease) {
		return Long.parseLong(String.valueOf(server.execute("HGET", redisKey, "~e:" + lease.owner())));
	}

	/** When {@code redisKey} expires: the server's clock in ms. */
	private long expiryTime(String redisKey) {
		return (Long) server.execute("PEXPIRETIME", redisKey);
	}

	/**
	 * Every read-write script once on each service, before leases of a short ttl: the first calls open connections and
	 * load scripts, which on a loaded machine may take longer than such a ttl (the lease would count as lost at once).
	 */
	static void warmUp(RedisLockService... services) {
		for (RedisLockService service : services) {
			Lease write = service.tryAcquire(LockRequest.of("warm-up", TTL, WAIT).write()).orElseThrow();
			Lease read = service.tryAcquire(LockRequest.of("warm-up", TTL, WAIT).read()).orElseThrow();
			read.isOwned();
			read.extend(Duration.ofSeconds(1));
			read.release();
			write.release();
		}
	}

	private List<String> fields(String redisKey) {
		Object reply = server.execute("HKEYS", redisKey);
		List<String> fields = new ArrayList<>();
		if (reply instanceof List<?> list) {
			list.forEach(field -> fields.add(String.valueOf(field)));
		}
		return fields;
	}

}
