package dev.distlock.sample.inventory.demo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.sample.inventory.stock.LockMode;
import dev.distlock.sample.inventory.web.ProblemTypes;
import org.jspecify.annotations.Nullable;

/**
 * Sends purchase attempts of one unit from many concurrent clients, spread round-robin over the instances as a load
 * balancer would, and counts how each was answered.
 */
final class LoadDriver {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

	private final HttpClient http;

	LoadDriver(HttpClient http) {
		this.http = http;
	}

	/** Send {@code attempts} purchases of {@code sku} in {@code mode} from {@code clients} threads. */
	Load drive(LockMode mode, String sku, List<URI> instances, int attempts, int clients, @Nullable Progress progress) {
		return drive(mode.parameterValue(), mode, sku, instances, attempts, clients, progress);
	}

	/** As {@link #drive(LockMode, String, List, int, int, Progress)}, with the progress bar labelled {@code row}. */
	Load drive(String row, LockMode mode, String sku, List<URI> instances, int attempts, int clients,
			@Nullable Progress progress) {
		Counters counters = new Counters(attempts);
		AtomicInteger next = new AtomicInteger();
		int threads = Math.min(clients, attempts);
		ExecutorService pool = Executors.newFixedThreadPool(threads, (task) -> {
			Thread thread = new Thread(task, "demo-client");
			thread.setDaemon(true);
			return thread;
		});
		if (progress != null) {
			progress.start(row, attempts, counters::done, counters::purchased);
		}
		long start = System.nanoTime();
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				workers.add(pool.submit(() -> {
					for (int attempt = next.getAndIncrement(); attempt < attempts; attempt = next.getAndIncrement()) {
						URI target = instances.get(attempt % instances.size())
							.resolve("/api/inventory/" + sku + "/purchases?quantity=1&lock=" + mode.parameterValue());
						purchase(target, attempt, counters);
					}
				}));
			}
			for (Future<?> worker : workers) {
				worker.get();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending purchases", ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("A client failed", ex.getCause());
		}
		finally {
			pool.shutdownNow();
			if (progress != null) {
				progress.finish();
			}
		}
		return counters.load(Duration.ofNanos(System.nanoTime() - start));
	}

	private void purchase(URI target, int attempt, Counters counters) {
		HttpRequest request = HttpRequest.newBuilder(target).timeout(REQUEST_TIMEOUT)
			.POST(HttpRequest.BodyPublishers.noBody()).build();
		long start = System.nanoTime();
		try {
			HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
			long latency = System.nanoTime() - start;
			String body = response.body();
			if (response.statusCode() == 200) {
				counters.record(attempt, latency, Outcome.PURCHASED, null);
			}
			else if (response.statusCode() == 409 && body.contains(ProblemTypes.SOLD_OUT.toString())) {
				counters.record(attempt, latency, Outcome.SOLD_OUT, null);
			}
			else if (response.statusCode() == 409 && body.contains(ProblemTypes.LOCK_BUSY.toString())) {
				counters.record(attempt, latency, Outcome.BUSY, null);
			}
			else {
				counters.record(attempt, latency, Outcome.ERROR, response.statusCode() + " " + body);
			}
		}
		catch (IOException ex) {
			counters.record(attempt, System.nanoTime() - start, Outcome.ERROR, ex.toString());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			counters.record(attempt, System.nanoTime() - start, Outcome.ERROR, "interrupted");
		}
	}

	enum Outcome {

		PURCHASED, SOLD_OUT, BUSY, ERROR

	}

	/**
	 * The clients' view of one mode's load.
	 *
	 * @param latenciesNanos the latency of each attempt, sorted
	 */
	record Load(int attempts, int purchased, int soldOut, int busy, int errors, @Nullable String firstError,
			Duration elapsed, long[] latenciesNanos) {

		/** The latency below which {@code percent} % of the attempts completed (nearest rank). */
		Duration percentile(double percent) {
			if (this.latenciesNanos.length == 0) {
				return Duration.ZERO;
			}
			int rank = (int) Math.ceil(percent / 100.0 * this.latenciesNanos.length);
			return Duration.ofNanos(this.latenciesNanos[Math.min(Math.max(rank, 1), this.latenciesNanos.length) - 1]);
		}

	}

	private static final class Counters {

		private final long[] latencies;

		private final AtomicInteger done = new AtomicInteger();

		private final AtomicInteger[] outcomes = new AtomicInteger[Outcome.values().length];

		private final AtomicReference<@Nullable String> firstError = new AtomicReference<>();

		Counters(int attempts) {
			this.latencies = new long[attempts];
			for (int i = 0; i < this.outcomes.length; i++) {
				this.outcomes[i] = new AtomicInteger();
			}
		}

		void record(int attempt, long latencyNanos, Outcome outcome, @Nullable String error) {
			this.latencies[attempt] = latencyNanos;
			this.outcomes[outcome.ordinal()].incrementAndGet();
			if (error != null) {
				this.firstError.compareAndSet(null, error);
			}
			this.done.incrementAndGet();
		}

		int done() {
			return this.done.get();
		}

		int purchased() {
			return count(Outcome.PURCHASED);
		}

		int count(Outcome outcome) {
			return this.outcomes[outcome.ordinal()].get();
		}

		/** Called after every worker finished: their writes to {@link #latencies} happen-before {@code Future.get}. */
		Load load(Duration elapsed) {
			long[] sorted = Arrays.copyOf(this.latencies, done());
			Arrays.sort(sorted);
			return new Load(done(), count(Outcome.PURCHASED), count(Outcome.SOLD_OUT), count(Outcome.BUSY),
					count(Outcome.ERROR), this.firstError.get(), elapsed, sorted);
		}

	}

}
