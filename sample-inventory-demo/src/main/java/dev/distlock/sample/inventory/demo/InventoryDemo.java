package dev.distlock.sample.inventory.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

import dev.distlock.sample.inventory.demo.DemoOptions.RedisAddress;
import dev.distlock.sample.inventory.demo.LoadDriver.Load;
import dev.distlock.sample.inventory.stock.LockMode;
import dev.distlock.test.redis.RedisServer;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The one-command demo: an inventory service behind a load balancer, selling the same stock from several instances.
 * <ol>
 * <li>starts a private {@code redis-server} on a free loopback port (or uses {@code --redis host:port});
 * <li>starts {@code --instances} app instances, each a separate JVM on its own loopback port;
 * <li>with {@code --redlock}: starts {@value DemoOptions#REDLOCK_NODES} more private {@code redis-server}s, and as
 * many instances again whose lock service is Redlock over them ({@code distlock.redlock.nodes}; their stock and
 * orders stay on the first Redis);
 * <li>for each lock mode (none, JVM-local, distributed): sets the stock of a fresh SKU, sends {@code --attempts}
 * purchases of one unit from {@code --clients} concurrent clients, round-robin over the instances, with a progress
 * bar, and reads back what the store holds; with {@code --redlock}, the distributed mode once more on the Redlock
 * instances (the {@code redlock} row);
 * <li>prints one row per mode, and exits with 0 only if the distributed lock (and Redlock) sold exactly
 * {@code min(stock, attempts)} units and never oversold (1 if it did not, 2 if the demo could not run);
 * <li>stops everything it started, also on Ctrl-C.
 * </ol>
 * Run it with {@code ./demo.sh} from the repository root; {@code --help} lists the options.
 */
public final class InventoryDemo implements AutoCloseable {

	private static final List<LockMode> MODES = List.of(LockMode.NONE, LockMode.LOCAL, LockMode.DISTRIBUTED);

	private static final int WARM_UP_ATTEMPTS_PER_INSTANCE = 25;

	/**
	 * The Redlock instances' node timeout: the default 50 ms is below the stalls of a machine that runs the demo's JVMs
	 * and six Redis servers on two cores, where a release would then miss its quorum now and then (a 503).
	 */
	private static final Duration REDLOCK_NODE_TIMEOUT = Duration.ofMillis(500);

	private final DemoOptions options;

	private final PrintStream out;

	private final PrintStream err;

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5)).build();

	private final StockApi stock = new StockApi(this.http);

	private final String runId = String.format(Locale.ROOT, "%06x", ThreadLocalRandom.current().nextInt(0x1000000));

	private final List<AppInstance> instances = new ArrayList<>();

	/** The instances locking with Redlock ({@code --redlock}), also in {@link #instances}. */
	private final List<AppInstance> redlockInstances = new ArrayList<>();

	private final List<RedisServer> redlockServers = new ArrayList<>();

	private final List<String> skus = new ArrayList<>();

	private @Nullable RedisServer redisServer;

	private volatile @Nullable Progress progress;

	private @Nullable Path workDir;

	private volatile boolean finished;

	private volatile boolean aborted;

	private boolean closed;

	private boolean keepLogs;

	InventoryDemo(DemoOptions options, PrintStream out, PrintStream err) {
		this.options = options;
		this.out = out;
		this.err = err;
	}

	public static void main(String[] args) {
		System.exit(run(args, System.out, System.err));
	}

	/** Run the demo and return its exit code; everything it started is stopped when this returns. */
	static int run(String[] args, PrintStream out, PrintStream err) {
		DemoOptions options;
		try {
			options = DemoOptions.parse(args);
		}
		catch (IllegalArgumentException ex) {
			err.println(ex.getMessage());
			err.println();
			err.print(DemoOptions.USAGE);
			return 2;
		}
		if (options.help()) {
			out.print(DemoOptions.USAGE);
			return 0;
		}
		InventoryDemo demo = new InventoryDemo(options, out, err);
		Thread hook = new Thread(demo::abort, "demo-shutdown");
		Runtime.getRuntime().addShutdownHook(hook);
		try {
			return demo.run();
		}
		catch (RuntimeException ex) {
			if (!demo.aborted) {
				demo.keepLogs = true;
				err.println();
				err.println("The demo could not run: " + ex.getMessage());
			}
			return 2;
		}
		finally {
			demo.close();
			try {
				Runtime.getRuntime().removeShutdownHook(hook);
			}
			catch (IllegalStateException shuttingDown) {
				// the hook is running or has run
			}
		}
	}

	int run() {
		RedisAddress redis = startRedis();
		List<RedisAddress> redlockNodes = this.options.redlock() ? startRedlockNodes() : List.of();
		Path dir = createWorkDir();
		AppInstance.Launcher launcher = AppInstance.Launcher.detect(this.options.appJar());
		this.out.printf(Locale.ROOT, "distlock inventory demo: %d instances sell the same stock%n", this.options.instances());
		this.out.println("  Redis:      " + DemoRedis.describe(redis, this.redisServer, this.runId));
		if (!redlockNodes.isEmpty()) {
			this.out.println("  Redlock:    " + DemoRedis.describeRedlock(this.redlockServers));
		}
		this.out.println("  instances:  " + this.options.instances() + " JVMs from " + launcher.description()
				+ (redlockNodes.isEmpty() ? ""
						: "; " + this.options.instances() + " more locking with Redlock over the " + redlockNodes.size()
								+ " masters (distlock.redlock.nodes), stock and orders on the Redis above"));
		this.out.println("  logs:       " + dir);
		startInstances(launcher, redis, redlockNodes, dir);
		List<URI> targets = this.instances.stream().filter((instance) -> !this.redlockInstances.contains(instance))
			.map(AppInstance::baseUri).toList();
		List<URI> redlockTargets = this.redlockInstances.stream().map(AppInstance::baseUri).toList();
		warmUp(targets, redlockTargets);
		this.out.printf(Locale.ROOT, "  load:       %d purchase attempts of 1 unit per mode against stock %d, %d concurrent "
				+ "clients, round-robin over %d instances%s; processing delay %d ms between read and write%n",
				this.options.attempts(), this.options.stock(), this.options.clients(), targets.size(),
				redlockTargets.isEmpty() ? "" : " (the redlock row: over the " + redlockTargets.size() + " Redlock instances)",
				this.options.processingDelay().toMillis());
		this.out.flush();
		List<ModeResult> results = new ArrayList<>();
		LoadDriver driver = new LoadDriver(this.http);
		try (Progress progress = new Progress(this.err, Progress.isInteractiveTerminal())) {
			this.progress = progress;
			for (LockMode mode : MODES) {
				results.add(runMode(mode.parameterValue(), mode, targets, driver, progress));
			}
			if (!redlockTargets.isEmpty()) {
				results.add(runMode(ModeResult.REDLOCK, LockMode.DISTRIBUTED, redlockTargets, driver, progress));
			}
		}
		DemoReport report = new DemoReport(results, this.options.expectedSold());
		this.out.println();
		this.out.print(report.table());
		this.out.println();
		report.verdict().forEach(this.out::println);
		this.out.flush();
		deleteSkus(targets.get(0));
		this.keepLogs = !report.passed();
		this.finished = true;
		return report.exitCode();
	}

	private ModeResult runMode(String row, LockMode mode, List<URI> targets, LoadDriver driver, Progress progress) {
		String sku = sku(row);
		this.stock.setStock(targets.get(0), sku, this.options.stock());
		Load load = driver.drive(row, mode, sku, targets, this.options.attempts(), this.options.clients(), progress);
		JsonNode level = this.stock.level(targets.get(0), sku);
		return new ModeResult(row, mode, load.attempts(), load.purchased(), load.soldOut(), load.busy(), load.errors(),
				load.firstError(), level.get("initialStock").asLong(), level.get("stock").asLong(),
				level.get("sold").asLong(), level.get("orders").asLong(), load.elapsed(), load.percentile(50),
				load.percentile(99));
	}

	/** A few purchases in each mode first, so that the first mode measured does not pay for class loading and JIT. */
	private void warmUp(List<URI> targets, List<URI> redlockTargets) {
		String sku = sku("warmup");
		this.stock.setStock(targets.get(0), sku, 1_000_000);
		LoadDriver driver = new LoadDriver(this.http);
		int attempts = WARM_UP_ATTEMPTS_PER_INSTANCE * targets.size();
		for (LockMode mode : MODES) {
			warmUp(driver, mode.parameterValue(), mode, sku, targets, attempts);
		}
		if (!redlockTargets.isEmpty()) {
			warmUp(driver, ModeResult.REDLOCK, LockMode.DISTRIBUTED, sku, redlockTargets,
					WARM_UP_ATTEMPTS_PER_INSTANCE * redlockTargets.size());
		}
	}

	private void warmUp(LoadDriver driver, String row, LockMode mode, String sku, List<URI> targets, int attempts) {
		Load load = driver.drive(row, mode, sku, targets, attempts, Math.min(8, this.options.clients()), null);
		if (load.purchased() == 0) {
			throw new IllegalStateException("Warm-up purchases in mode " + row + " all failed: " + load.firstError());
		}
	}

	private Path createWorkDir() {
		try {
			this.workDir = Files.createTempDirectory("distlock-demo-");
			return this.workDir;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create a directory for the instances' logs", ex);
		}
	}

	private RedisAddress startRedis() {
		RedisAddress given = this.options.redis();
		if (given != null) {
			DemoRedis.ping(given);
			return given;
		}
		this.redisServer = RedisServer.start();
		return new RedisAddress(this.redisServer.host(), this.redisServer.port());
	}

	/**
	 * The independent masters of the Redlock row: private servers on free loopback ports, whether or not the store's
	 * Redis was given with {@code --redis}.
	 */
	private List<RedisAddress> startRedlockNodes() {
		List<RedisAddress> nodes = new ArrayList<>();
		for (int i = 0; i < DemoOptions.REDLOCK_NODES; i++) {
			RedisServer server;
			synchronized (this) {
				if (this.closed) {
					throw new IllegalStateException("Interrupted");
				}
				server = RedisServer.start();
				this.redlockServers.add(server);
			}
			nodes.add(new RedisAddress(server.host(), server.port()));
		}
		return nodes;
	}

	/**
	 * Start the instances, and with {@code redlockNodes} as many more whose lock service is Redlock over them; all start
	 * at once and are awaited together.
	 */
	private void startInstances(AppInstance.Launcher launcher, RedisAddress redis, List<RedisAddress> redlockNodes,
			Path dir) {
		long start = System.nanoTime();
		launchInstances(launcher, redis, null, dir);
		if (!redlockNodes.isEmpty()) {
			launchInstances(launcher, redis,
					String.join(",", redlockNodes.stream().map((node) -> "redis://" + node).toList()), dir);
		}
		long deadline = start + this.options.startTimeout().toNanos();
		for (AppInstance instance : this.instances) {
			instance.awaitReady(this.http, deadline);
		}
		this.out.printf(Locale.ROOT, "  started:    %s in %.1f s%n", String.join(", ", this.instances.stream()
			.map((instance) -> instance.name() + " " + instance.baseUri() + " (pid " + instance.pid() + ")").toList()),
				(System.nanoTime() - start) / 1e9);
	}

	/** Launch {@code --instances} instances; with {@code redlockNodes} (Redis URLs), ones that lock with Redlock. */
	private void launchInstances(AppInstance.Launcher launcher, RedisAddress redis, @Nullable String redlockNodes,
			Path dir) {
		for (int i = 1; i <= this.options.instances(); i++) {
			String name = ((redlockNodes != null) ? "redlock-" : "app-") + i;
			List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
					"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
					"--inventory.instance-id=" + name, "--inventory.processing-delay="
							+ this.options.processingDelay().toMillis() + "ms", "--spring.main.banner-mode=off"));
			if (redlockNodes != null) {
				arguments.add("--distlock.redlock.nodes=" + redlockNodes);
				arguments.add("--distlock.redlock.node-timeout=" + REDLOCK_NODE_TIMEOUT.toMillis() + "ms");
			}
			synchronized (this) {
				if (this.closed) {
					throw new IllegalStateException("Interrupted");
				}
				AppInstance instance = AppInstance.launch(name, launcher, arguments, dir);
				this.instances.add(instance);
				if (redlockNodes != null) {
					this.redlockInstances.add(instance);
				}
			}
		}
	}

	private String sku(String name) {
		String sku = "demo-" + this.runId + "-" + name;
		this.skus.add(sku);
		return sku;
	}

	/** The demo's SKUs matter only on a Redis given with --redis, but leave no trace either way. */
	private void deleteSkus(URI instance) {
		for (String sku : this.skus) {
			try {
				this.stock.delete(instance, sku);
			}
			catch (RuntimeException ex) {
				this.err.println("Could not delete " + sku + ": " + ex.getMessage());
			}
		}
	}

	/** The shutdown hook: Ctrl-C or a SIGTERM before the demo finished. */
	private void abort() {
		if (!this.finished) {
			this.aborted = true;
			Progress current = this.progress;
			if (current != null) {
				current.close();
			}
			this.err.println();
			this.err.println("Interrupted: stopping the app instances and Redis"
					+ (this.options.redlock() ? " (all of them)" : ""));
		}
		close();
	}

	/** Stop the instances (in parallel, each gracefully first) and Redis; delete the logs unless something failed. */
	@Override
	public void close() {
		List<AppInstance> toStop;
		synchronized (this) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			toStop = List.copyOf(this.instances);
		}
		List<Thread> stoppers = toStop.stream().map((instance) -> new Thread(instance::close, "stop-" + instance.name()))
			.toList();
		stoppers.forEach(Thread::start);
		for (Thread stopper : stoppers) {
			try {
				stopper.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		RedisServer server = this.redisServer;
		if (server != null) {
			server.close();
		}
		List<RedisServer> redlock;
		synchronized (this) {
			redlock = List.copyOf(this.redlockServers);
		}
		redlock.forEach(RedisServer::close);
		Path dir = this.workDir;
		if (dir != null) {
			if (this.keepLogs && !toStop.isEmpty()) {
				this.err.println("Logs of the instances are kept in " + dir);
			}
			else {
				deleteRecursively(dir);
			}
		}
	}

	private static void deleteRecursively(Path dir) {
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// a temp dir; nothing else to do
		}
	}

}
