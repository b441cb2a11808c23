package dev.distlock.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.RedisBinary;
import dev.distlock.test.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;

/**
 * What each of the uncontended path's scripts costs Redis, call by call (issue 31): runs, against a
 * {@code redis-server} of its own, the free-key {@code ACQUIRE} and the last-hold {@code RELEASE} with the arguments
 * the engine sends, the floor's {@code SET NX PX} and compare-and-delete script, and variants of the scripts with one
 * call removed or changed, and prints Redis's own time per call ({@code INFO commandstats}, {@code usec} of
 * {@code evalsha} over its {@code calls}, reset before each phase) per variant.
 * <p>
 * Why variants and not the inner commands' own figures: Redis counts a script's inner commands under their names too,
 * but that is only the command's body; what a call costs a script (the Lua to C conversion of its arguments and its
 * reply, the ACL and cluster checks of {@code redis.call}) shows only as the difference between the script with and
 * without it. Both are printed: the variants' table, then the inner commands' {@code usec_per_call} of the engine's
 * scripts.
 * <p>
 * Each phase sends its calls pipelined (batches of 100 in flight), which changes nothing in what Redis spends per call
 * but makes a phase of 20,000 calls take a fraction of a second; a key is acquired in the acquire phase and released
 * in the release phase, one key per call, so every acquisition finds its key free and every release ends its last
 * hold. Variants run in turn within a round; the figures printed are the median of the rounds and their least, which
 * on a machine shared with other work is the one least stretched by it. Run it with
 * <pre>
 * java -cp lock-benchmarks/target/lock-benchmarks.jar -Dloader.main=dev.distlock.benchmarks.ScriptCosts \
 *   org.springframework.boot.loader.launch.PropertiesLauncher [--calls=20000] [--rounds=7] [--embedded]
 * </pre>
 * ({@code --embedded}: the embedded jar's Redis, 6.2, instead of the {@code redis-server} on the path). Not part of
 * the documented full run: a tool for finding which call costs what.
 */
public final class ScriptCosts {

	private static final int BATCH = 100;

	private static final String OWNER_PREFIX = "0b5e7c1e-3f0a-4c55-9d7e-2c6d8f1a9b40:";

	private static final String CLIENT_ID = "0b5e7c1e-3f0a-4c55-9d7e-2c6d8f1a9b40";

	private static final String LABEL = "application@bench-host-01 thread \"main\"";

	private static final String TTL = "30000";

	private static final String RECEIPT_MILLIS = "10000";

	private ScriptCosts() {
	}

	public static void main(String[] args) throws Exception {
		int calls = 20_000;
		int rounds = 7;
		boolean embedded = false;
		for (String arg : args) {
			if (arg.startsWith("--calls=")) {
				calls = Integer.parseInt(arg.substring("--calls=".length()));
			}
			else if (arg.startsWith("--rounds=")) {
				rounds = Integer.parseInt(arg.substring("--rounds=".length()));
			}
			else if (arg.equals("--embedded")) {
				embedded = true;
			}
			else {
				System.err.println("Usage: ScriptCosts [--calls=N] [--rounds=N] [--embedded]");
				System.exit(2);
			}
		}
		try (RedisServer server = embedded ? RedisServer.start(RedisBinary.embedded()) : RedisServer.start()) {
			RedisClient client = RedisClient.create("redis://" + server.host() + ":" + server.port());
			try (StatefulRedisConnection<byte[], byte[]> connection = client.connect(ByteArrayCodec.INSTANCE);
					StatefulRedisConnection<String, String> admin = client.connect()) {
				new ScriptCosts().run(server.version(), connection.async(), admin.sync(), calls, rounds);
			}
			finally {
				client.shutdown();
			}
		}
		System.exit(0);
	}

	/** One case: an acquisition and a release, either of which may be a script variant or the floor's command. */
	private record Case(String name, Step acquire, Step release) {
	}

	/** One phase's call: a script (run with EVALSHA) with its arguments for key i, or the floor's SET NX PX (script null). */
	private record Step(String label, String script, Args args) {
	}

	@FunctionalInterface
	private interface Args {

		byte[][] argv(int i, String token);

	}

	private static final String ACQUIRE = LockScripts.ACQUIRE.getScriptAsString();

	private static final String RELEASE = LockScripts.RELEASE.getScriptAsString();

	private static final String FREE_KEY_TIME = """
			  local t = redis.call('time')
			  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
			""";

	/** The free-key path's expiry: sent as the client gave it, through the prelude's helper only when refused. */
	private static final String FREE_KEY_EXPIRY = "redis.pcall('pexpire', KEYS[1], ARGV[2])";

	/** The free-key path from its token to its reply, as issue 31 found it (at 9de84b6): for a before and after. */
	private static final String FREE_KEY_BEFORE = """
			  local t = redis.call('time')
			  local token = n(tonumber(t[1]) * 1000000 + tonumber(t[2]))
			  hold(token)
			  local failed = expire(KEYS[1], ARGV[2], true)
			  if failed then
			    return failed
			  end
			  return {1, tonumber(token)}
			""";

	private static final String CAD = """
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  return redis.call('del', KEYS[1])
			end
			return 0
			""";

	private static final String HGETALL_LOOP = RELEASE.substring(0, RELEASE.indexOf("local receipt"));

	private static Args acquireArgs(String label) {
		return (i, token) -> argv(OWNER_PREFIX + i, TTL, "", "", "", "", label);
	}

	private static final Args RELEASE_ARGS = (i, token) -> argv(OWNER_PREFIX + i, token, "lock:" + i + ":released",
			CLIENT_ID, "", "1", RECEIPT_MILLIS);

	private static List<Case> cases() {
		Step acquire = new Step("ACQUIRE", ACQUIRE, acquireArgs(LABEL));
		Step release = new Step("RELEASE", RELEASE, RELEASE_ARGS);
		List<Case> cases = new ArrayList<>();
		cases.add(new Case("engine (ACQUIRE with label, RELEASE)", acquire, release));
		cases.add(new Case("floor (SET NX PX, compare-and-delete)", new Step("SET", null, null),
				new Step("CAD", CAD, (i, token) -> argv(token))));
		cases.add(acquireVariant("ACQUIRE as of 9de84b6 (the token formatted twice, PEXPIRE through expire())",
				replace(ACQUIRE, ACQUIRE.substring(ACQUIRE.indexOf(FREE_KEY_TIME), ACQUIRE.indexOf("return {1, token}\nend\n")
						+ "return {1, token}\n".length()), FREE_KEY_BEFORE), acquireArgs(LABEL)));
		cases.add(acquireVariant("ACQUIRE without label (HSET of 2 fields)", ACQUIRE, acquireArgs("")));
		cases.add(acquireVariant("ACQUIRE without ACL check",
				replace(ACQUIRE, "if unannounced(KEYS[1], ARGV[6]) then", "if false then"), acquireArgs(LABEL)));
		cases.add(acquireVariant("ACQUIRE without TIME (constant token)",
				replace(ACQUIRE, FREE_KEY_TIME, "  local token = 1\n"), acquireArgs(LABEL)));
		cases.add(acquireVariant("ACQUIRE with TIME called, constant token",
				replace(ACQUIRE, FREE_KEY_TIME, "  redis.call('time')\n  local token = 1\n"), acquireArgs(LABEL)));
		cases.add(acquireVariant("ACQUIRE without EXISTS",
				replace(ACQUIRE, "if redis.call('exists', KEYS[1]) == 0 then", "if true then"), acquireArgs(LABEL)));
		cases.add(acquireVariant("ACQUIRE with PEXPIRE by redis.call (no pcall)",
				replace(ACQUIRE, FREE_KEY_EXPIRY, "redis.call('pexpire', KEYS[1], ARGV[2])"), acquireArgs(LABEL)));
		cases.add(acquireVariant("ACQUIRE without PEXPIRE", replace(ACQUIRE, FREE_KEY_EXPIRY, "0"), acquireArgs(LABEL)));
		cases.add(new Case("ACQUIRE's helpers, then return {1, 1}", new Step("ACQUIRE variant",
				LockScripts.PRELUDE + LockScripts.UNANNOUNCED + "return {1, 1}\n", acquireArgs(LABEL)), null));
		cases.add(new Case("return {1, 1}, ACQUIRE's 7 arguments",
				new Step("ACQUIRE variant", "return {1, 1}\n", acquireArgs(LABEL)), null));
		cases.add(new Case("return {1, 1}, no arguments",
				new Step("ACQUIRE variant", "return {1, 1}\n", (i, token) -> argv()), null));
		cases.add(releaseVariant("RELEASE without the receipt SET",
				replace(RELEASE, "redis.call('set', receipt, ARGV[2] .. ':' .. others, 'px', ARGV[7] or '1000')\n", "")));
		cases.add(releaseVariant("RELEASE with a receipt of constant value",
				replace(RELEASE, "redis.call('set', receipt, ARGV[2] .. ':' .. others, 'px', ARGV[7] or '1000')",
						"redis.call('set', receipt, '1:0', 'px', ARGV[7] or '1000')")));
		cases.add(releaseVariant("RELEASE with a receipt without PX (no expiry)",
				replace(RELEASE, "redis.call('set', receipt, ARGV[2] .. ':' .. others, 'px', ARGV[7] or '1000')",
						"redis.call('set', receipt, ARGV[2] .. ':' .. others)")));
		cases.add(releaseVariant("RELEASE with HMGET of token and owner for HGETALL", replace(RELEASE, HGETALL_LOOP, """
				local f = redis.call('hmget', KEYS[1], '~t', ARGV[1])
				local token, count, noted, others = f[1], tonumber(f[2] or '0'), false, 0
				""")));
		cases.add(releaseVariant("RELEASE: HGETALL, then DEL only", HGETALL_LOOP
				+ "redis.call('del', KEYS[1])\nreturn {0, 0}\n"));
		cases.add(releaseVariant("RELEASE: DEL only", "redis.call('del', KEYS[1])\nreturn {0, 0}\n"));
		return cases;
	}

	private static Case acquireVariant(String name, String script, Args args) {
		return new Case(name, new Step("ACQUIRE variant", script, args),
				new Step("RELEASE", RELEASE, RELEASE_ARGS));
	}

	private static Case releaseVariant(String name, String script) {
		return new Case(name, new Step("ACQUIRE", ACQUIRE, acquireArgs(LABEL)),
				new Step("RELEASE variant", script, RELEASE_ARGS));
	}

	/** {@code text} with {@code target} replaced once; fails when the script no longer holds it. */
	private static String replace(String text, String target, String replacement) {
		int at = text.indexOf(target);
		if (at < 0) {
			throw new IllegalStateException("The script no longer holds: " + target + "\n" + text);
		}
		return text.substring(0, at) + replacement + text.substring(at + target.length());
	}

	private void run(String version, RedisAsyncCommands<byte[], byte[]> redis, RedisCommands<String, String> admin,
			int calls, int rounds) throws Exception {
		List<Case> cases = cases();
		Map<String, List<Double>> acquireMicros = new LinkedHashMap<>();
		Map<String, List<Double>> releaseMicros = new LinkedHashMap<>();
		Map<String, List<Double>> innerMicros = new LinkedHashMap<>();
		for (int round = 1; round <= rounds; round++) {
			for (Case c : cases) {
				admin.flushall();
				admin.configResetstat();
				String[] tokens = acquirePhase(redis, c.acquire(), calls);
				Map<String, double[]> stats = commandStats(admin);
				acquireMicros.computeIfAbsent(c.name(), k -> new ArrayList<>())
					.add(perCall(stats, (c.acquire().script() != null) ? "evalsha" : "set", calls));
				if (round > 1 && c == cases.get(0)) {
					inner(stats, "ACQUIRE", innerMicros);
				}
				if (c.release() == null) {
					continue;
				}
				admin.configResetstat();
				releasePhase(redis, c.release(), calls, tokens);
				stats = commandStats(admin);
				releaseMicros.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(perCall(stats, "evalsha", calls));
				if (round > 1 && c == cases.get(0)) {
					inner(stats, "RELEASE", innerMicros);
				}
			}
			System.err.printf(Locale.ROOT, "round %d of %d done%n", round, rounds);
		}
		System.out.printf(Locale.ROOT, "%nRedis %s, %,d calls per phase, %d rounds: the median of the rounds, and their "
				+ "least in brackets, the figure least disturbed by other processes (Redis µs per call, INFO commandstats)"
				+ "%n%n", version, calls, rounds);
		System.out.println("| variant | acquire µs/call | release µs/call | acquire + release µs |");
		System.out.println("|---|---|---|---|");
		for (Case c : cases) {
			List<Double> a = acquireMicros.get(c.name());
			List<Double> r = releaseMicros.get(c.name());
			System.out.printf(Locale.ROOT, "| %s | %s | %s | %s |%n", c.name(), figure(a), (r != null) ? figure(r) : "–",
					(r != null) ? String.format(Locale.ROOT, "%.2f (%.2f)", median(a) + median(r), least(a) + least(r))
							: "–");
		}
		System.out.println();
		System.out.println("| engine script: inner command | µs per call (its body only) | calls per script call |");
		System.out.println("|---|---|---|");
		innerMicros.forEach((name, values) -> {
			if (!name.endsWith("#calls")) {
				System.out.printf(Locale.ROOT, "| %s | %.2f | %.2f |%n", name, median(values),
						median(innerMicros.get(name + "#calls")) / calls);
			}
		});
	}

	private static void inner(Map<String, double[]> stats, String script, Map<String, List<Double>> into) {
		stats.forEach((command, figures) -> {
			if (!command.startsWith("eval") && !command.equals("config") && !command.equals("flushall")) {
				into.computeIfAbsent(script + ": " + command.toUpperCase(Locale.ROOT), k -> new ArrayList<>())
					.add(figures[1] / figures[0]);
				into.computeIfAbsent(script + ": " + command.toUpperCase(Locale.ROOT) + "#calls", k -> new ArrayList<>())
					.add(figures[0]);
			}
		});
	}

	private String[] acquirePhase(RedisAsyncCommands<byte[], byte[]> redis, Step step, int calls) throws Exception {
		String[] tokens = new String[calls];
		String sha = (step.script() != null) ? load(redis, step.script()) : null;
		List<RedisFuture<?>> batch = new ArrayList<>(BATCH);
		for (int i = 0; i < calls; i++) {
			byte[] key = bytes("lock:" + i);
			if (sha == null) {
				tokens[i] = OWNER_PREFIX + i;
				batch.add(redis.set(key, bytes(tokens[i]), SetArgs.Builder.nx().px(30_000)));
			}
			else {
				batch.add(redis.evalsha(sha, ScriptOutputType.MULTI, new byte[][] { key }, step.args().argv(i, "")));
			}
			if (batch.size() == BATCH || i == calls - 1) {
				int first = i + 1 - batch.size();
				for (int j = 0; j < batch.size(); j++) {
					Object reply = batch.get(j).get(30, TimeUnit.SECONDS);
					if (sha != null) {
						List<?> list = (List<?>) reply;
						if (((Long) list.get(0)) != 1L) {
							throw new IllegalStateException(step.label() + " did not acquire: " + list);
						}
						tokens[first + j] = Long.toString((Long) list.get(1));
					}
				}
				batch.clear();
			}
		}
		return tokens;
	}

	private void releasePhase(RedisAsyncCommands<byte[], byte[]> redis, Step step, int calls, String[] tokens)
			throws Exception {
		String sha = load(redis, step.script());
		List<RedisFuture<?>> batch = new ArrayList<>(BATCH);
		for (int i = 0; i < calls; i++) {
			ScriptOutputType type = step.label().equals("CAD") ? ScriptOutputType.INTEGER : ScriptOutputType.MULTI;
			batch.add(redis.evalsha(sha, type, new byte[][] { bytes("lock:" + i) }, step.args().argv(i, tokens[i])));
			if (batch.size() == BATCH || i == calls - 1) {
				for (RedisFuture<?> future : batch) {
					Object reply = future.get(30, TimeUnit.SECONDS);
					boolean released = (reply instanceof List<?> list) ? ((Long) list.get(0)) == 0L
							: ((Long) reply) == 1L;
					if (!released) {
						throw new IllegalStateException(step.label() + " did not release: " + reply);
					}
				}
				batch.clear();
			}
		}
	}

	private static String load(RedisAsyncCommands<byte[], byte[]> redis, String script) throws Exception {
		return redis.scriptLoad(bytes(script)).get(30, TimeUnit.SECONDS);
	}

	/** {command: {calls, usec}} from INFO commandstats. */
	private static Map<String, double[]> commandStats(RedisCommands<String, String> admin) {
		Map<String, double[]> stats = new HashMap<>();
		for (String line : admin.info("commandstats").split("\r?\n")) {
			if (!line.startsWith("cmdstat_")) {
				continue;
			}
			String command = line.substring("cmdstat_".length(), line.indexOf(':'));
			double[] figures = new double[2];
			for (String part : line.substring(line.indexOf(':') + 1).split(",")) {
				if (part.startsWith("calls=")) {
					figures[0] = Double.parseDouble(part.substring(6));
				}
				else if (part.startsWith("usec=")) {
					figures[1] = Double.parseDouble(part.substring(5));
				}
			}
			stats.put(command, figures);
		}
		return stats;
	}

	private static double perCall(Map<String, double[]> stats, String command, int calls) {
		double[] figures = stats.get(command);
		if (figures == null || figures[0] != calls) {
			throw new IllegalStateException("Expected " + calls + " calls of " + command + ", got "
					+ ((figures != null) ? figures[0] : 0));
		}
		return figures[1] / figures[0];
	}

	private static String figure(List<Double> values) {
		return String.format(Locale.ROOT, "%.2f (%.2f)", median(values), least(values));
	}

	private static double least(List<Double> values) {
		return values.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
	}

	private static double median(List<Double> values) {
		double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
		return (sorted.length % 2 == 1) ? sorted[sorted.length / 2]
				: (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
	}

	private static byte[][] argv(String... args) {
		return Arrays.stream(args).map(ScriptCosts::bytes).toArray(byte[][]::new);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
