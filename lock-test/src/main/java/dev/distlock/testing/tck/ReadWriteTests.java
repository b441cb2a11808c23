package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Read-write locks ({@link LockMode#READ}, {@link LockMode#WRITE}): readers share a key, a writer has it alone, a
 * waiting writer keeps new readers out, a writer may also read (a downgrade) but a reader may not write (an upgrade).
 */
abstract class ReadWriteTests extends FairTests {


	/** Skips the test for an engine without read-write locks. */
	private void assumeReadWriteLocks() {
		assumeTrue(supports(LockMode.READ) && supports(LockMode.WRITE),
				"the engine does not support read-write locks");
	}

	private static LockRequest read(String key, Duration wait) {
		return LockRequest.of(key, LONG_TTL, wait).read();
	}

	private static LockRequest write(String key, Duration wait) {
		return LockRequest.of(key, LONG_TTL, wait).write();
	}

	/** Readers of several instances hold the key at once, with one token; a writer waits for the last of them. */
	@Test
	void readersShareTheKeyAcrossInstances() {
		assumeReadWriteLocks();
		String key = key("shared");
		LockService a = instance();
		LockService b = instance();
		LockService writer = instance();
		Lease first = a.acquire(read(key, Duration.ZERO));
		Lease second = b.acquire(read(key, Duration.ZERO));
		assertThat(second.fencingToken()).isEqualTo(first.fencingToken());
		assertThat(writer.holder(key)).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(2));
		assertThat(writer.tryAcquire(write(key, Duration.ZERO))).isEmpty();
		first.release();
		assertThat(writer.tryAcquire(write(key, Duration.ZERO))).isEmpty();
		second.release();
		Optional<Lease> written = writer.tryAcquire(write(key, Duration.ZERO));
		assertThat(written).hasValueSatisfying(
				(lease) -> assertThat(lease.fencingToken()).isGreaterThan(first.fencingToken()));
		written.get().release();
	}

	/** A writer has the key alone: no reader, no other writer, and no exclusive lock of the same key. */
	@Test
	void aWriterExcludesReadersAndWriters() {
		assumeReadWriteLocks();
		String key = key("written");
		LockService a = instance();
		LockService b = instance();
		Lease written = a.acquire(write(key, Duration.ZERO));
		assertThat(b.tryAcquire(read(key, Duration.ZERO))).isEmpty();
		assertThat(b.tryAcquire(write(key, Duration.ZERO))).isEmpty();
		assertThat(tryOnceElsewhere(a, key)).as("an exclusive lock of the same key").isEmpty();
		written.release();
		Optional<Lease> read = b.tryAcquire(read(key, Duration.ZERO));
		assertThat(read).hasValueSatisfying((lease) -> assertThat(lease.fencingToken()).isGreaterThan(written.fencingToken()));
		read.get().release();
	}

	/**
	 * A writer waiting for readers keeps new readers out, so that a stream of readers cannot starve it; it gets the key
	 * when the last reader leaves, and readers come in again after it.
	 */
	@Test
	void aWaitingWriterKeepsNewReadersOut() {
		assumeReadWriteLocks();
		String key = key("starving");
		LockService a = instance();
		LockService b = instance();
		LockService c = instance();
		Lease reading = a.acquire(read(key, Duration.ZERO));
		Future<Lease> writing = inBackground(() -> b.acquire(write(key, LONG_WAIT)));
		await().atMost(PATIENCE).until(() -> {
			Optional<Lease> reader = c.tryAcquire(read(key, Duration.ZERO));
			reader.ifPresent(Lease::release);
			return reader.isEmpty();
		});
		assertThat(writing).isNotDone();
		reading.release();
		Lease written = get(writing);
		assertThat(c.tryAcquire(read(key, Duration.ZERO))).isEmpty();
		written.release();
		assertThat(c.tryAcquire(read(key, Duration.ZERO))).hasValueSatisfying(Lease::release);
	}

	/**
	 * The writer's owner may also read the key (a downgrade, with the writer's token) and keep reading after the
	 * write; a reader asking for the write lock of its key is refused at once instead of waiting for itself.
	 */
	@Test
	void aWriterMayReadButAReaderMayNotWrite() {
		assumeReadWriteLocks();
		String key = key("downgrade");
		LockService a = instance();
		LockService b = instance();
		Lease written = a.acquire(write(key, Duration.ZERO));
		Lease read = a.acquire(read(key, Duration.ZERO));
		assertThat(read.fencingToken()).isEqualTo(written.fencingToken());
		written.release();
		assertThat(b.tryAcquire(write(key, Duration.ZERO))).as("a writer, while the downgrade reads").isEmpty();
		Optional<Lease> sharing = b.tryAcquire(read(key, Duration.ZERO));
		assertThat(sharing).as("another reader, once the writer left").isPresent();
		sharing.get().release();
		// the same owner (this thread), reading, asks to write: refused at once, whatever its wait
		assertThatThrownBy(() -> a.tryAcquire(write(key, LONG_WAIT))).as("an upgrade")
			.isInstanceOf(RuntimeException.class)
			.hasMessageContaining(key);
		read.release();
		assertThat(b.tryAcquire(write(key, Duration.ZERO))).hasValueSatisfying(Lease::release);
	}

	/** Every writer gets a greater token than any holder before it; the readers of one read phase share theirs. */
	@Test
	void writersTokensGrowAndReadersOfOnePhaseShareOne() {
		assumeReadWriteLocks();
		String key = key("phases");
		LockService a = instance();
		LockService b = instance();
		Lease firstWrite = a.acquire(write(key, Duration.ZERO));
		firstWrite.release();
		Lease reader1 = a.acquire(read(key, Duration.ZERO));
		Lease reader2 = b.acquire(read(key, Duration.ZERO));
		assertThat(reader1.fencingToken()).isEqualTo(reader2.fencingToken()).isGreaterThan(firstWrite.fencingToken());
		reader1.release();
		reader2.release();
		Lease secondWrite = b.acquire(write(key, Duration.ZERO));
		assertThat(secondWrite.fencingToken()).isGreaterThan(reader1.fencingToken());
		secondWrite.release();
	}

}
