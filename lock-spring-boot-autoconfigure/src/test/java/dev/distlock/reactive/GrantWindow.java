package dev.distlock.reactive;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.LockOperatorView;
import dev.distlock.test.redis.RedisServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The window between a grant and its hand-off, held open for a test: a {@link ReactiveLockService} that runs the
 * cancellation the test {@linkplain #cancelAtGrant armed} on the thread that delivers the engine's grant, after the
 * engine granted the lease (Redis holds it) and before the work or the caller got it. That is where a subscription
 * disposed "around when the grant arrives" lands; the race, made deterministic. Public for the Kotlin tests' beans.
 */
public final class GrantWindow {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private final AtomicReference<Runnable> armed = new AtomicReference<>();

	private final CountDownLatch fired = new CountDownLatch(1);

	/**
	 * Reactive locks on {@code service} that cancel at the next grant once armed.
	 * @param service the engine
	 * @return the reactive view
	 */
	public ReactiveLockService locks(AsyncLockService service) {
		return new ReactiveLockService(service, (lease) -> {
			Runnable cancel = this.armed.getAndSet(null);
			if (cancel != null) {
				cancel.run();
				this.fired.countDown();
			}
		});
	}

	/**
	 * Run {@code cancel} at the next grant, between the grant and its hand-off.
	 * @param cancel what cancels the waiting call: a dispose, a coroutine's cancel
	 */
	public void cancelAtGrant(Runnable cancel) {
		this.armed.set(cancel);
	}

	/** Wait until the armed cancellation ran, at the grant. */
	public void awaitCancelled() throws InterruptedException {
		assertThat(this.fired.await(DEADLINE.toSeconds(), TimeUnit.SECONDS))
			.as("the waiting call was granted its lease and cancelled there").isTrue();
	}

	/**
	 * Wait until neither Redis nor the engine holds any of {@code keys} (the default key prefix), and fail at the
	 * deadline: a lease left held is renewed by its watchdog, so it would still be there.
	 * @param redis the server, read directly
	 * @param view the engine of the cancelled caller
	 * @param keys the lock keys
	 */
	public static void assertNothingHeld(RedisServer redis, LockOperatorView view, String... keys) {
		for (String key : keys) {
			await().atMost(DEADLINE)
				.untilAsserted(() -> assertThat(redis.execute("EXISTS", "lock:{" + key + "}"))
					.as("Redis holds lock '%s'", key).isEqualTo(0L));
			await().atMost(DEADLINE)
				.untilAsserted(() -> assertThat(view.activeLeases()).as("the engine's leases")
					.noneMatch((lease) -> lease.key().equals(key)));
		}
	}

}
