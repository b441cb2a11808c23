package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;

/**
 * Injects one fault at a time, at random, into the lock server's path: network faults on one service's proxy (or now
 * and then on all of them; among them re-delivery, a command run twice), a frozen server (SIGSTOP) for less or more than a lease time, and a restart that loses all
 * data. Every kind comes once, in a random order, before the rest are drawn by weight, so that even a short run
 * covers them all. Durations and gaps are the chaos itself, not synchronisation: nothing waits on them.
 */
final class ChaosFaults {

	enum Kind {

		LATENCY(22), BLACKHOLE(22), DROP_REPLIES(22), RESET(14), REDELIVERY(16), SHORT_PAUSE(9), LONG_PAUSE(6),
		RESTART(5);

		final int weight;

		Kind(int weight) {
			this.weight = weight;
		}

		String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	private static final int MIN_FAULT_MILLIS = 100;

	private static final int MAX_FAULT_MILLIS = 1500;

	private final RedisServer server;

	private final List<FaultProxy> proxies;

	private final Random random;

	private final Duration ttl;

	private final ChaosLedger ledger;

	private final List<Kind> firstRound = new ArrayList<>(List.of(Kind.values()));

	private volatile String current = "none";

	ChaosFaults(RedisServer server, List<FaultProxy> proxies, Random random, Duration ttl, ChaosLedger ledger) {
		this.server = server;
		this.proxies = proxies;
		this.random = random;
		this.ttl = ttl;
		this.ledger = ledger;
		Collections.shuffle(this.firstRound, random);
	}

	/** Inject faults until {@code endAt} (System.nanoTime), then heal everything. */
	void run(long endAt) throws InterruptedException {
		try {
			while (endAt - System.nanoTime() > 0) {
				TimeUnit.MILLISECONDS.sleep(between(100, 600));
				if (endAt - System.nanoTime() <= 0) {
					break;
				}
				inject(next());
			}
		}
		finally {
			healAll();
		}
	}

	/** The fault in progress, for the log of a violation. */
	String current() {
		return this.current;
	}

	/** Forward normally on every proxy and let the server run; safe to call at any time. */
	void healAll() {
		this.proxies.forEach(FaultProxy::heal);
		this.server.resume();
		this.current = "none";
	}

	private Kind next() {
		if (!this.firstRound.isEmpty()) {
			return this.firstRound.remove(0);
		}
		int total = 0;
		for (Kind kind : Kind.values()) {
			total += kind.weight;
		}
		int pick = this.random.nextInt(total);
		for (Kind kind : Kind.values()) {
			pick -= kind.weight;
			if (pick < 0) {
				return kind;
			}
		}
		throw new IllegalStateException("unreachable");
	}

	private void inject(Kind kind) throws InterruptedException {
		this.ledger.count("fault." + kind.label());
		switch (kind) {
			case LATENCY -> {
				Duration latency = Duration.ofMillis(between(20, 500));
				network(kind, latency.toMillis() + "ms", proxy -> proxy.latency(latency));
			}
			case BLACKHOLE -> network(kind, "", FaultProxy::blackhole);
			case DROP_REPLIES -> network(kind, "", FaultProxy::dropReplies);
			// the next command runs and its connection closes before the reply: Lettuce sends it again
			case REDELIVERY -> network(kind, "", FaultProxy::redeliverNext);
			case RESET -> {
				List<FaultProxy> targets = targets();
				this.current = "reset of " + targets.size() + " proxies";
				targets.forEach(FaultProxy::resetAll);
			}
			case SHORT_PAUSE -> pause(between(MIN_FAULT_MILLIS, (int) (this.ttl.toMillis() * 6 / 10)));
			case LONG_PAUSE -> pause((int) this.ttl.toMillis() + between(200, 800));
			case RESTART -> {
				this.current = "restart";
				this.server.restart();
				this.current = "none";
			}
		}
	}

	private void network(Kind kind, String detail, Consumer<FaultProxy> fault)
			throws InterruptedException {
		List<FaultProxy> targets = targets();
		int millis = between(MIN_FAULT_MILLIS, MAX_FAULT_MILLIS);
		this.current = kind.label() + detail + " on " + targets.size() + " proxies for " + millis + "ms";
		targets.forEach(fault);
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		finally {
			targets.forEach(FaultProxy::heal);
			this.current = "none";
		}
	}

	private void pause(int millis) throws InterruptedException {
		this.current = "pause for " + millis + "ms";
		this.server.pause();
		try {
			TimeUnit.MILLISECONDS.sleep(millis);
		}
		finally {
			this.server.resume();
			this.current = "none";
		}
	}

	/** One service's proxy, or (one time in seven) every proxy. */
	private List<FaultProxy> targets() {
		if (this.random.nextInt(7) == 0) {
			this.ledger.count("fault.on-all-services");
			return this.proxies;
		}
		return List.of(this.proxies.get(this.random.nextInt(this.proxies.size())));
	}

	private int between(int min, int max) {
		return min + this.random.nextInt(max - min + 1);
	}

}
