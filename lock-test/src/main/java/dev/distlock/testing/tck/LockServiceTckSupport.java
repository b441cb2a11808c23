package dev.distlock.testing.tck;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.ApplicationEventPublisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The hooks through which {@link LockServiceTck} runs an engine, and what its tests share: instances that are closed
 * after each test, keys no other test uses, threads for the callers that wait, waits with generous deadlines.
 * Extend {@link LockServiceTck}, not this class: it holds the hooks a subclass implements or overrides.
 *
 * @since 0.1.0
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class LockServiceTckSupport {

	/** The lease time of leases that a test never lets run out: renewed, it is not slept through either. */
	static final Duration LONG_TTL = Duration.ofSeconds(30);

	/** The wait of acquisitions that a test ends itself (a release, an interrupt, a cancel), never by time. */
	static final Duration LONG_WAIT = Duration.ofSeconds(60);

	/**
	 * How long a test waits for something that must happen soon: far beyond any stall of a loaded machine, and shorter
	 * than {@link #LONG_TTL}, so that what only a lease's expiry could bring about does not pass for what a release
	 * brought about.
	 */
	static final Duration PATIENCE = Duration.ofSeconds(20);

	/** How long the suite's stress tests, many acquisitions one after another, may take in all. */
	static final Duration STRESS_DEADLINE = Duration.ofSeconds(90);

	/** The keys of one test, unique in the store: tests never see each other's locks. */
	private final String keyPrefix = "tck-" + UUID.randomUUID().toString().substring(0, 8) + ":";

	private final List<LockService> instances = new CopyOnWriteArrayList<>();

	private final AtomicInteger threadCount = new AtomicInteger();

	private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "tck-caller-" + this.threadCount.incrementAndGet());
		thread.setDaemon(true);
		return thread;
	});

	/** Made by the test kit: extend {@link LockServiceTck}. */
	LockServiceTckSupport() {
	}

	/**
	 * A new instance of the engine under test, standing for one application instance: it must share its store with
	 * every other instance made in the same test (so that they exclude each other), and have a client of its own
	 * (so that it does not re-enter their leases). The suite closes it after the test ({@link #closeInstance}).
	 * @param options what the instance is to tell of its leases, and to whom
	 * @return the instance
	 */
	protected abstract LockService newInstance(Options options);

	/**
	 * Let {@code time} pass on the clock the engine measures lease times and waits on. The default sleeps, for an
	 * engine on real time; an engine on a clock of the test's advances it.
	 * @param time how much time passes
	 */
	protected void passTime(Duration time) {
		try {
			Thread.sleep(time.toMillis(), (int) (time.toNanos() % 1_000_000));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while letting time pass", ex);
		}
	}

	/**
	 * {@return the time on the engine's clock} (what {@link Lease#validUntil()} is compared with); the default is
	 * {@link Instant#now()}.
	 */
	protected Instant now() {
		return Instant.now();
	}

	/**
	 * Whether time passes only through {@link #passTime(Duration)}: then the suite also checks that leases do not
	 * expire and waits do not end a moment early, which on real time a loaded machine could not show reliably.
	 * @return false by default
	 */
	protected boolean timeIsControlled() {
		return false;
	}

	/**
	 * Whether {@code holder(key)} and a forced release report exactly the fencing token the holder's lease carries. A
	 * quorum engine may report a greater one: Redlock's lease carries the greatest token of the nodes that granted it in time, while
	 * {@code holder} reads every node, including one whose grant came late and that the lease adopted so as to renew
	 * it there; that node's token can be greater. The suite then checks that the reported token is at least the
	 * lease's, which is what a storage's fence compares. Such an engine's release also returns once a quorum
	 * confirmed it, so a forced release right after it may still find a slower node's remnant.
	 * @return true by default
	 */
	protected boolean holderReportsTheLeasesOwnToken() {
		return true;
	}

	/**
	 * The lease time of the tests that let a lease's time pass, and the wait of those that let a wait end. On real
	 * time it is slept through, so it should be short; it must also be long enough that the engine's watchdog keeps a
	 * renewed lease of this time through the stalls of a loaded machine (for the Redis engine: several renewal
	 * intervals longer than the longest stall). Default 2 s.
	 * @return the short lease time
	 */
	protected Duration shortTtl() {
		return Duration.ofSeconds(2);
	}

	/**
	 * Make {@code instance} stop as a crashed application instance does: its leases are neither released nor renewed
	 * any more, so they block their keys until their lease time runs out. The default closes it, which is what
	 * closing means for the Redis engines; an engine whose close releases its leases overrides this.
	 * @param instance an instance made by {@link #newInstance(Options)}
	 */
	protected void crash(LockService instance) {
		assumeTrue(instance instanceof AutoCloseable, "the instances cannot be stopped (not AutoCloseable)");
		closeInstance(instance);
	}

	/**
	 * Close an instance after its test (or when it crashes); the default closes an {@link AutoCloseable} one.
	 * @param instance an instance made by {@link #newInstance(Options)}
	 */
	protected void closeInstance(LockService instance) {
		if (instance instanceof AutoCloseable closeable) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Could not close " + instance, ex);
			}
		}
	}

	/**
	 * Make {@code lease} lost: delete it from the store as an operator would, so that its holder finds it lost at its
	 * next renewal or call on it, and the key is free for others. The default forces its release through a new
	 * instance that is a {@link LockForceReleaser}; the lost-lease tests are skipped when it is not.
	 * @param lease a lease held by an instance made by {@link #newInstance(Options)}
	 */
	protected void loseLease(Lease lease) {
		LockService operator = instance(Options.NONE);
		assumeTrue(operator instanceof LockForceReleaser, "the engine cannot force a release (not a LockForceReleaser)");
		((LockForceReleaser) operator).forceRelease(lease.key());
	}

	/**
	 * Whether the engine supports {@code mode}; the tests of a mode it does not support are skipped. The default asks
	 * the engine once: an engine that does not support a mode refuses it with an
	 * {@link UnsupportedOperationException} ({@link LockMode}).
	 * @param mode the lock mode
	 * @return whether the engine takes requests in that mode
	 */
	protected boolean supports(LockMode mode) {
		LockService probe = instance(Options.NONE);
		try {
			Optional<Lease> lease = probe.tryAcquire(LockRequest.of(key("probe-" + mode), Duration.ofSeconds(30),
					Duration.ZERO).withMode(mode));
			lease.ifPresent(Lease::release);
			return true;
		}
		catch (UnsupportedOperationException ex) {
			return false;
		}
	}

	/** An instance without listeners, closed after the test. */
	final LockService instance() {
		return instance(Options.NONE);
	}

	/** An instance with the given options, closed after the test. */
	final LockService instance(Options options) {
		LockService instance = newInstance(options);
		this.instances.add(instance);
		return instance;
	}

	/** A key of this test: {@code name} behind a prefix no other test uses. */
	final String key(String name) {
		return this.keyPrefix + name;
	}

	/** An instance whose losses are recorded in {@code losses}, and whose published events in {@code published}. */
	LockService instance(List<LockLostEvent> losses, List<Object> published) {
		LockListener listener = new LockListener() {

			@Override
			public void lost(LockLostEvent event) {
				losses.add(event);
			}

		};
		return instance(new Options(List.of(listener), published::add));
	}

	/** Run {@code call} on a thread of its own (a caller that may wait). */
	<T> Future<T> inBackground(Callable<T> call) {
		return this.threads.submit(call);
	}

	/** One attempt of {@code service} on another thread, which holds nothing. */
	Optional<Lease> tryOnceElsewhere(LockService service, String key) {
		return get(inBackground(() -> service.tryAcquire(key, LONG_TTL, Duration.ZERO)));
	}

	/** The result of {@code future}, which must come within {@link #PATIENCE}; its failure is thrown as it is. */
	static <T> T get(Future<T> future) {
		return get(future, PATIENCE);
	}

	/** The result of {@code future}, which must come within {@code deadline}; its failure is thrown as it is. */
	static <T> T get(Future<T> future, Duration deadline) {
		try {
			return future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (ex.getCause() instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new AssertionError("No result within " + deadline, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** {@code future} stays undone a while: it is waiting, not merely slow to start. */
	static void assertStaysUndone(Future<?> future) {
		await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(10)).until(() -> !future.isDone());
	}

	/** Until no instance holds {@code key}, as {@code service} asks the store. */
	static void awaitFree(LockService service, String key) {
		await().atMost(PATIENCE).until(() -> !service.isLocked(key));
	}

	/** {@code service}'s operator view; the test is skipped for an engine without one. */
	static LockOperatorView view(LockService service) {
		assumeTrue(service instanceof LockOperatorView, "the engine has no operator view (not a LockOperatorView)");
		return (LockOperatorView) service;
	}

	/** Until {@code service} counts {@code count} waiting callers, when it can tell; else until {@code waiter} waits a while. */
	static void awaitWaiting(LockService service, int count, @Nullable Future<?> waiter) {
		if (service instanceof LockOperatorView view) {
			await().atMost(PATIENCE).until(() -> view.waitingThreads() == count);
		}
		else if (waiter != null) {
			assertStaysUndone(waiter);
		}
	}

	static LockRequest request(String key, Duration ttl, Duration wait) {
		return LockRequest.of(key, ttl, wait);
	}

	/** The losses heard, once the expected number came, within {@link #PATIENCE}. */
	static List<LockLostEvent> awaitLosses(List<LockLostEvent> losses, int count) {
		await().atMost(PATIENCE).until(() -> losses.size() >= count);
		assertThat(losses).hasSize(count);
		return losses;
	}

	static List<Object> newEvents() {
		return new CopyOnWriteArrayList<>();
	}

	static List<LockLostEvent> newLosses() {
		return new CopyOnWriteArrayList<>();
	}

	@AfterEach
	void closeInstances() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
		List<RuntimeException> failures = new ArrayList<>();
		for (LockService instance : this.instances) {
			try {
				closeInstance(instance);
			}
			catch (RuntimeException ex) {
				failures.add(ex);
			}
		}
		this.instances.clear();
		if (!failures.isEmpty()) {
			throw failures.get(0);
		}
	}

	/**
	 * What an instance is made with: the listeners it tells of acquisitions, releases and losses, and the publisher of
	 * its {@code LockLostEvent}s.
	 *
	 * @param listeners the listeners the instance must call, as the lock API describes
	 * @param eventPublisher where the instance must publish lost leases, or {@code null} for nowhere
	 */
	public record Options(List<LockListener> listeners, @Nullable ApplicationEventPublisher eventPublisher) {

		/** No listeners, no publisher. */
		public static final Options NONE = new Options(List.of(), null);

		/**
		 * Copies the listeners.
		 * @param listeners the listeners the instance must call
		 * @param eventPublisher where the instance must publish lost leases, or {@code null}
		 */
		public Options {
			listeners = List.copyOf(listeners);
		}

	}

}
