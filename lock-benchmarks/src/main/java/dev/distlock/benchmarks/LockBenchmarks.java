package dev.distlock.benchmarks;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;

/**
 * Runs every contestant through every scenario against one {@code redis-server} the run starts itself, in one JVM:
 * each scenario runs its rounds one after the other, and each round runs every contestant once, in the same order.
 * <p>
 * {@code --full} (the default) prints the tables and writes them, with the chart, into {@code docs/} (or
 * {@code --docs=DIR}); the documented run is {@code --full --redlock}, whose Redlock contestants give issue 31's goals
 * rows their figures. {@code --smoke} runs every scenario for a few seconds and writes nothing. The
 * exit status is 1 when a contestant failed or lost an update.
 */
public final class LockBenchmarks {

	private LockBenchmarks() {
	}

	public static void main(String[] args) throws Exception {
		System.setProperty("java.awt.headless", "true");
		Settings settings = Settings.full();
		boolean write = true;
		Path docs = Path.of("docs");
		List<Contestant> contestants = contestants();
		java.util.Set<Scenario> only = java.util.EnumSet.allOf(Scenario.class);
		boolean replica = false;
		boolean cluster = false;
		boolean paths = false;
		boolean redlock = false;
		boolean noHandOver = false;
		for (String arg : args) {
			if (arg.equals("--smoke")) {
				settings = Settings.smoke();
				write = false;
			}
			else if (arg.equals("--full")) {
				settings = Settings.full();
			}
			else if (arg.equals("--no-write")) {
				write = false;
			}
			else if (arg.startsWith("--only=")) {
				// for working on one scenario; never writes the docs
				only = java.util.EnumSet.noneOf(Scenario.class);
				for (String name : arg.substring("--only=".length()).split(",")) {
					only.add(Scenario.valueOf(name.trim().toUpperCase(Locale.ROOT)));
				}
				write = false;
			}
			else if (arg.startsWith("--contestants=")) {
				// for working on some contestants (names contain one of the given words, or equal one given as =name);
				// never writes the docs
				List<String> words = List.of(arg.substring("--contestants=".length()).toLowerCase(Locale.ROOT).split(","));
				contestants = contestants.stream()
					.filter(c -> words.stream().anyMatch(w -> w.startsWith("=") ? c.name().toLowerCase(Locale.ROOT).equals(w.substring(1))
							: c.name().toLowerCase(Locale.ROOT).contains(w)))
					.toList();
				write = false;
			}
			else if (arg.equals("--replica")) {
				// the server gets a replica, and the contestants a distlock with distlock.replica-acks=1; never
				// writes the docs, whose figures are of a server without replicas
				replica = true;
				write = false;
			}
			else if (arg.equals("--cluster")) {
				// a 3-master Redis Cluster beside the server, and a distlock contestant on it in scenario 3; never
				// writes the docs
				cluster = true;
				write = false;
			}
			else if (arg.equals("--paths")) {
				// issue 11: contestants with the engine's template-only Redis path and with its own pub/sub connection
				// instead of Spring Data's RedisMessageListenerContainer, beside the default; never writes the docs
				paths = true;
				write = false;
			}
			else if (arg.equals("--redlock")) {
				// 5 more servers, and contestants locking over 3 and 5 of them: this starter's Redlock engine and
				// Redisson's RedissonRedLock, in scenarios 1 and 2; part of the documented full run (issue 31's goals)
				redlock = true;
			}
			else if (arg.equals("--no-hand-over")) {
				// issue 13: a distlock contestant without local hand-overs (localHandOvers(0)) in scenario 2, beside the
				// default, to see what the reactive contestant's asynchronous waiters, which are never handed a lease,
				// go without; never writes the docs
				noHandOver = true;
				write = false;
			}
			else if (arg.startsWith("--docs=")) {
				docs = Path.of(arg.substring("--docs=".length()));
			}
			else {
				System.err.println("Usage: LockBenchmarks [--full | --smoke] [--no-write] [--docs=DIR] [--only=SCENARIO,..] [--contestants=word,..] [--replica] [--cluster] [--paths] [--redlock] [--no-hand-over]");
				System.exit(2);
			}
		}
		if (paths) {
			List<Contestant> withPaths = new ArrayList<>(contestants);
			withPaths.add(DistlockContestant.templateOnly());
			withPaths.add(DistlockContestant.ownSubscription());
			contestants = withPaths;
		}
		if (noHandOver) {
			List<Contestant> withoutHandOver = new ArrayList<>(contestants);
			withoutHandOver.add(DistlockContestant.withoutLocalHandOvers());
			contestants = withoutHandOver;
		}
		if (replica) {
			List<Contestant> withAcks = new ArrayList<>(contestants);
			withAcks.add(DistlockContestant.withReplicaAcks(1));
			contestants = withAcks;
		}
		Results results;
		List<RedisServer> redlockNodes = new ArrayList<>();
		try (RedisServer server = RedisServer.start();
				RedisServer follower = replica ? startReplica(server) : null;
				RedisCluster redisCluster = cluster ? RedisCluster.start() : null) {
			if (redlock) {
				for (int i = 0; i < REDLOCK_NODES; i++) {
					redlockNodes.add(RedisServer.start());
				}
				List<Contestant> withRedlock = new ArrayList<>(contestants);
				withRedlock.addAll(redlockContestants(redlockNodes.stream()
					.map(node -> new Contestant.Target(node.host(), node.port())).toList(), RedlockContestant.NODE_TIMEOUT));
				contestants = withRedlock;
			}
			if (redisCluster != null) {
				List<Contestant> withCluster = new ArrayList<>(contestants);
				withCluster.add(DistlockContestant.onCluster(redisCluster.seedNodes()));
				contestants = withCluster;
			}
			results = run(settings, new Contestant.Target(server.host(), server.port()), contestants, only, System.out);
		}
		finally {
			redlockNodes.forEach(RedisServer::close);
		}
		System.out.println();
		System.out.println(Report.markdown(results));
		if (write) {
			Path doc = docs.resolve("benchmarks.md");
			Report.write(results, doc);
			System.out.println("Wrote " + doc + " and " + doc.resolveSibling(Report.CHART));
		}
		List<String> problems = new ArrayList<>(results.errors());
		problems.addAll(results.lostUpdates());
		if (!problems.isEmpty()) {
			System.err.println("FAILED:\n  " + String.join("\n  ", problems));
			System.exit(1);
		}
		System.exit(0);
	}

	/** A replica of {@code master}, once its link is up. */
	private static RedisServer startReplica(RedisServer master) throws InterruptedException {
		RedisServer replica = RedisServer.builder().config("replicaof", master.host(), Integer.toString(master.port())).start();
		long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
		while (!String.valueOf(replica.execute("INFO", "replication")).contains("master_link_status:up")) {
			if (System.nanoTime() - deadline > 0) {
				replica.close();
				throw new IllegalStateException("The replica did not connect to its master within 30 s");
			}
			Thread.sleep(50);
		}
		return replica;
	}

	/** Independent masters {@code --redlock} starts beside the run's server. */
	static final int REDLOCK_NODES = 5;

	/**
	 * The multi-node contestants of {@code --redlock}: this starter's Redlock engine and Redisson's RedissonRedLock, each
	 * over the first 3 and over all 5 of {@code nodes} (the same nodes for both), in that order; ours with the given
	 * node timeout (null: the default, which follows the nodes' reply times).
	 */
	static List<Contestant> redlockContestants(List<Contestant.Target> nodes,
			java.time.@org.jspecify.annotations.Nullable Duration nodeTimeout) {
		List<Contestant> contestants = new ArrayList<>();
		List<Integer> sizes = (nodes.size() > 3) ? List.of(3, nodes.size()) : List.of(nodes.size());
		for (int size : sizes) {
			contestants.add(new RedlockContestant(nodes.subList(0, size), nodeTimeout));
			contestants.add(new RedissonRedLockContestant(nodes.subList(0, size)));
		}
		return contestants;
	}

	/** The contestants, in the order they run within each round. */
	static List<Contestant> contestants() {
		return List.of(new DistlockContestant(), DistlockModeContestant.fairLock(), DistlockModeContestant.readWrite(),
				DistlockModeContestant.permits(), new AnnotatedContestant(), new ReactiveContestant(),
				new RedissonContestant(), RedissonContestant.fairLock(), RedissonContestant.readWrite(),
				RedissonContestant.permits(), IntegrationContestant.pubSub(),
				IntegrationContestant.spin(), IntegrationContestant.renewing(), FloorContestant.setNx(),
				FloorContestant.ping());
	}

	/** Run every scenario; a failing turn is recorded with its error and the run goes on. */
	static Results run(Settings settings, Contestant.Target target, List<Contestant> contestants,
			java.util.Set<Scenario> selected, PrintStream log) throws Exception {
		try (RedisProbe probe = new RedisProbe(target)) {
			Results results = new Results(settings, contestants, probe.serverVersion());
			Scenarios scenarios = new Scenarios(target, settings, probe, log);
			long started = System.nanoTime();
			for (Scenario scenario : selected) {
				int rounds = switch (scenario) {
					case MEMORY -> 1;
					case WATCHDOG -> Math.min(3, settings.rounds());
					default -> settings.rounds();
				};
				for (int round = 1; round <= rounds; round++) {
					if (scenario == Scenario.UNCONTENDED) {
						runInterleaved(scenarios, contestants, round, results, log, started);
						continue;
					}
					for (Contestant contestant : contestants) {
						if (!contestant.scenarios().contains(scenario)) {
							continue;
						}
						Results.Turn turn;
						try {
							turn = new Results.Turn(scenario, contestant, round, scenarios.run(scenario, contestant), null);
						}
						catch (Exception | Error ex) {
							ex.printStackTrace(log);
							turn = new Results.Turn(scenario, contestant, round, Map.of(), String.valueOf(ex));
						}
						results.add(turn);
						log.printf(Locale.ROOT, "[%4ds] %-11s round %d  %-38s %s%n", (System.nanoTime() - started) / 1_000_000_000,
								scenario.name(), round, contestant.name(), describe(turn));
					}
				}
			}
			results.finish();
			return results;
		}
	}

	/** Scenario 1's round: every contestant's clients open at once, measured in interleaved slices. */
	private static void runInterleaved(Scenarios scenarios, List<Contestant> contestants, int round, Results results,
			PrintStream log, long started) {
		List<Contestant> taking = contestants.stream().filter(c -> c.scenarios().contains(Scenario.UNCONTENDED)).toList();
		Map<Contestant, Map<Metric, Double>> measured;
		String error = null;
		try {
			measured = scenarios.uncontendedInterleaved(taking);
		}
		catch (Exception | Error ex) {
			ex.printStackTrace(log);
			measured = Map.of();
			error = String.valueOf(ex);
		}
		for (Contestant contestant : taking) {
			Map<Metric, Double> metrics = measured.get(contestant);
			Results.Turn turn = new Results.Turn(Scenario.UNCONTENDED, contestant, round,
					(metrics != null) ? metrics : Map.of(), (metrics != null) ? null : error);
			results.add(turn);
			log.printf(Locale.ROOT, "[%4ds] %-11s round %d  %-38s %s%n", (System.nanoTime() - started) / 1_000_000_000,
					Scenario.UNCONTENDED.name(), round, contestant.name(), describe(turn));
		}
	}

	private static String describe(Results.Turn turn) {
		if (turn.error() != null) {
			return "ERROR " + turn.error();
		}
		return turn.metrics().entrySet().stream()
			.map(e -> e.getKey().label + "=" + e.getKey().format(e.getValue()))
			.collect(Collectors.joining(", "));
	}

}
