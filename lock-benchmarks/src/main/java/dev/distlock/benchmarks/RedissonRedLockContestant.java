package dev.distlock.benchmarks;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@link RedissonRedLock} ({@code --redlock}; deprecated in Redisson, still in 4.7.0) over N independent
 * masters: one {@link RedissonClient} per node, default settings except the watchdog timeout (the scenario's lease
 * time), and one {@link RLock} per node combined into the RedLock, in watchdog mode ({@code tryLock(wait)} without a
 * lease time). Scenarios 1 and 2 only.
 */
@SuppressWarnings("deprecation")
final class RedissonRedLockContestant implements Contestant {

	private final List<Target> nodes;

	RedissonRedLockContestant(List<Target> nodes) {
		this.nodes = List.copyOf(nodes);
	}

	@Override
	public String name() {
		return "Redisson RedLock, " + this.nodes.size() + " nodes";
	}

	@Override
	public boolean onMainServer() {
		return false;
	}

	@Override
	public Kind kind() {
		return Kind.PEER;
	}

	@Override
	public Set<Scenario> scenarios() {
		return EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY);
	}

	@Override
	public Client open(Target target, Options options) {
		List<RedissonClient> clients = new ArrayList<>();
		try {
			for (Target node : this.nodes) {
				Config config = new Config();
				config.useSingleServer().setAddress(node.uri());
				config.setLockWatchdogTimeout(options.ttl().toMillis());
				clients.add(Redisson.create(config));
			}
		}
		catch (RuntimeException ex) {
			clients.forEach(client -> client.shutdown(0, 5, TimeUnit.SECONDS));
			throw ex;
		}
		return new RedLockClient(clients, "bench-redisson-redlock" + this.nodes.size() + ":",
				options.waitTime().toMillis());
	}

	private record RedLockClient(List<RedissonClient> clients, String prefix, long waitMillis) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) throws InterruptedException {
			RLock[] locks = new RLock[this.clients.size()];
			for (int i = 0; i < locks.length; i++) {
				locks[i] = this.clients.get(i).getLock(this.prefix + key);
			}
			RedissonRedLock lock = new RedissonRedLock(locks);
			return Client.lockedWith(lock, this.waitMillis, criticalSection);
		}

		@Override
		public void close() {
			this.clients.forEach(client -> client.shutdown(0, 5, TimeUnit.SECONDS));
		}

	}

}
