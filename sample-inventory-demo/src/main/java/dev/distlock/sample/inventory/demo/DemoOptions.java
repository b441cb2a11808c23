package dev.distlock.sample.inventory.demo;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * The demo's command line.
 *
 * @param instances app instances to start, each a separate JVM; at least {@value #MIN_INSTANCES}
 * @param stock the stock each mode starts with
 * @param attempts purchase attempts of one unit per mode
 * @param clients concurrent HTTP clients
 * @param processingDelay the instances' pause between reading and writing the stock
 * @param redis an existing Redis to use ({@code host:port}) instead of starting one; {@code null} to start one
 * @param appJar the demo jar to start the instances from; {@code null} for the jar or class path of this JVM
 * @param startTimeout how long the instances may take to become ready
 * @param quick whether the reduced CI size was asked for
 * @param redlock whether to add the Redlock row: {@value #REDLOCK_NODES} more private Redis servers, and as many app
 * instances again whose lock service is Redlock over them
 * @param help whether only the usage was asked for
 */
record DemoOptions(int instances, int stock, int attempts, int clients, Duration processingDelay,
		@Nullable RedisAddress redis, @Nullable Path appJar, Duration startTimeout, boolean quick, boolean redlock,
		boolean help) {

	/** The story needs a load balancer in front of several instances: one instance never oversells with a local lock. */
	static final int MIN_INSTANCES = 2;

	/** The independent Redis masters of the Redlock row: a quorum of 3 survives two of them failing. */
	static final int REDLOCK_NODES = 5;

	static final String USAGE = """
			Usage: ./demo.sh [options]   (or: java -jar sample-inventory-demo/target/sample-inventory-demo.jar [options])

			Starts Redis and several inventory instances, sells the same stock from all of them at once in each lock
			mode (none, JVM-local, distributed) and prints what was sold and oversold. Exits with 0 only if the
			distributed lock sold exactly min(stock, attempts) units and never oversold (with --redlock: on one Redis
			and on Redlock).

			  --instances N      app instances, each a separate JVM (default 2, at least 2)
			  --stock N          stock of the SKU in each mode (default 500)
			  --attempts N       purchase attempts of 1 unit per mode (default 2000)
			  --clients N        concurrent HTTP clients (default 64)
			  --delay DURATION   pause between reading and writing the stock in the app, e.g. 2ms (default 2ms)
			  --redis HOST:PORT  use this Redis instead of starting a private one (only the demo's own keys are
			                     written, and deleted afterwards)
			  --quick            reduced size for CI: stock 100, 400 attempts, 16 clients (explicit options win)
			  --redlock          add a redlock row: start 5 more private redis-servers (independent masters) and as
			                     many instances again, locking with Redlock over the 5 (distlock.redlock.nodes,
			                     node-timeout 500ms); their stock and orders stay on the first Redis. The exit code
			                     covers this row too
			  --app-jar PATH     the demo jar to start the instances from (default: the jar or class path the demo
			                     runs from)
			  --start-timeout D  how long the instances may take to start (default 180s)
			  --help             this text
			""";

	/**
	 * Parse {@code --name value} and {@code --name=value} options.
	 * @throws IllegalArgumentException naming the option that is unknown, lacks a value or has a bad one
	 */
	static DemoOptions parse(String... args) {
		boolean quick = false;
		for (String arg : args) {
			if (arg.equals("--quick")) {
				quick = true;
			}
		}
		int instances = 2;
		int stock = quick ? 100 : 500;
		int attempts = quick ? 400 : 2000;
		int clients = quick ? 16 : 64;
		Duration delay = Duration.ofMillis(2);
		RedisAddress redis = null;
		Path appJar = null;
		Duration startTimeout = Duration.ofSeconds(180);
		boolean redlock = false;
		boolean help = false;
		for (int i = 0; i < args.length; i++) {
			String arg = args[i];
			String name = arg;
			String value = null;
			int eq = arg.indexOf('=');
			if (arg.startsWith("--") && eq > 0) {
				name = arg.substring(0, eq);
				value = arg.substring(eq + 1);
			}
			switch (name) {
				case "--quick" -> {
				}
				case "--redlock" -> redlock = true;
				case "--help", "-h" -> help = true;
				case "--instances", "--stock", "--attempts", "--clients", "--delay", "--redis", "--app-jar",
						"--start-timeout" -> {
					if (value == null) {
						if (i + 1 >= args.length) {
							throw new IllegalArgumentException("Option " + name + " needs a value");
						}
						value = args[++i];
					}
					switch (name) {
						case "--instances" -> instances = atLeast(name, value, MIN_INSTANCES, ": within one instance a "
								+ "JVM-local lock is enough, the demo shows what happens across several");
						case "--stock" -> stock = positive(name, value, 1);
						case "--attempts" -> attempts = positive(name, value, 1);
						case "--clients" -> clients = positive(name, value, 1);
						case "--delay" -> delay = duration(name, value, true);
						case "--redis" -> redis = RedisAddress.parse(value);
						case "--app-jar" -> appJar = Path.of(value);
						case "--start-timeout" -> startTimeout = duration(name, value, false);
						default -> throw new IllegalStateException(name);
					}
				}
				default -> throw new IllegalArgumentException("Unknown option '" + arg + "'; see --help");
			}
		}
		return new DemoOptions(instances, stock, attempts, clients, delay, redis, appJar, startTimeout, quick, redlock,
				help);
	}

	/** The units the distributed lock must sell: all the stock, or one per attempt when there are fewer. */
	long expectedSold() {
		return Math.min(this.stock, this.attempts);
	}

	private static int positive(String name, String value, int min) {
		return atLeast(name, value, min, "");
	}

	private static int atLeast(String name, String value, int min, String why) {
		try {
			int parsed = Integer.parseInt(value.trim());
			if (parsed >= min) {
				return parsed;
			}
		}
		catch (NumberFormatException ex) {
			// reported below
		}
		throw new IllegalArgumentException("Option " + name + " needs a whole number of at least " + min + ", but was '" + value
				+ "'" + why);
	}

	private static Duration duration(String name, String value, boolean zeroAllowed) {
		Duration parsed;
		try {
			parsed = DurationStyle.detectAndParse(value.trim().toLowerCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("Option " + name + " needs a duration like 2ms or 1s, but was '" + value + "'");
		}
		if (parsed.isNegative() || (!zeroAllowed && parsed.isZero())) {
			throw new IllegalArgumentException("Option " + name + " needs a " + (zeroAllowed ? "non-negative" : "positive")
					+ " duration, but was '" + value + "'");
		}
		return parsed;
	}

	/** A Redis given on the command line. */
	record RedisAddress(String host, int port) {

		static RedisAddress parse(String value) {
			int colon = value.lastIndexOf(':');
			if (colon <= 0 || colon == value.length() - 1) {
				throw new IllegalArgumentException("Option --redis needs host:port, but was '" + value + "'");
			}
			String host = value.substring(0, colon);
			if (host.startsWith("[") && host.endsWith("]")) {
				host = host.substring(1, host.length() - 1);
			}
			int port;
			try {
				port = Integer.parseInt(value.substring(colon + 1));
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("Option --redis needs host:port, but was '" + value + "'");
			}
			if (port < 1 || port > 65535) {
				throw new IllegalArgumentException("Option --redis needs a port from 1 to 65535, but was '" + value + "'");
			}
			return new RedisAddress(host, port);
		}

		@Override
		public String toString() {
			return (this.host.contains(":") ? "[" + this.host + "]" : this.host) + ":" + this.port;
		}

	}

}
