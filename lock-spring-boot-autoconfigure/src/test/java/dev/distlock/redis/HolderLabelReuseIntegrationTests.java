package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.redis.internal.script.LockScripts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine keeps the one-line form of the label it stored last and reuses it for the next acquisition with the same
 * label (issue 31): a label that changed, a thread renamed between two acquisitions or another thread acquiring, must
 * be stored as it is now, never as the one before.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HolderLabelReuseIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(60);

	@Test
	void aThreadRenamedBetweenTwoAcquisitionsIsStoredByItsNewName() throws Exception {
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.holderApplication("inventory")
			.holderInstance("pod-1"));
		Thread thread = Thread.currentThread();
		String name = thread.getName();
		try {
			thread.setName("before-rename");
			Lease first = service.acquire("reuse", TTL, Duration.ZERO);
			assertThat(storedLabel(service, first)).isEqualTo("inventory@pod-1 thread \"before-rename\"");
			first.release();
			Lease again = service.acquire("reuse", TTL, Duration.ZERO);
			assertThat(storedLabel(service, again)).isEqualTo("inventory@pod-1 thread \"before-rename\"");
			again.release();

			thread.setName("after-rename");
			Lease renamed = service.acquire("reuse", TTL, Duration.ZERO);
			assertThat(storedLabel(service, renamed)).isEqualTo("inventory@pod-1 thread \"after-rename\"");
			renamed.release();
		}
		finally {
			thread.setName(name);
		}

		Thread other = new Thread(() -> {
			Lease lease = service.acquire("reuse-other", TTL, Duration.ZERO);
			assertThat(storedLabel(service, lease)).isEqualTo("inventory@pod-1 thread \"other-acquirer\"");
			lease.release();
		}, "other-acquirer");
		java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
		other.setUncaughtExceptionHandler((t, ex) -> failure.set(ex));
		other.start();
		other.join(TimeUnit.SECONDS.toMillis(30));
		assertThat(failure.get()).isNull();
		assertThat(other.isAlive()).isFalse();
	}

	private Object storedLabel(RedisLockService service, Lease lease) {
		return this.server.execute("HGET", service.redisKey(lease.key()), LockScripts.LABEL_PREFIX + lease.owner());
	}

}
