package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The physical floor: the least a correct lease lock can do, on one raw Lettuce connection. Acquire is
 * {@code SET key token NX PX ttl}, release a compare-and-delete script: two round trips, no reentrancy, no watchdog,
 * no fencing token. A waiter polls every millisecond. The {@link #ping()} variant is one bare {@code PING} per
 * operation, the cost of a single round trip.
 */
final class FloorContestant implements Contestant {

	private static final String COMPARE_AND_DELETE = """
			if redis.call('get', KEYS[1]) == ARGV[1] then
			  return redis.call('del', KEYS[1])
			end
			return 0
			""";

	private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final boolean ping;

	private FloorContestant(boolean ping) {
		this.ping = ping;
	}

	static FloorContestant setNx() {
		return new FloorContestant(false);
	}

	static FloorContestant ping() {
		return new FloorContestant(true);
	}

	@Override
	public String name() {
		return this.ping ? "floor: PING" : "floor: SET NX + CAD";
	}

	@Override
	public Kind kind() {
		return this.ping ? Kind.BASELINE : Kind.FLOOR;
	}

	@Override
	public Set<Scenario> scenarios() {
		return this.ping ? EnumSet.of(Scenario.UNCONTENDED)
				: EnumSet.of(Scenario.UNCONTENDED, Scenario.HOT_KEY, Scenario.HOT_KEY_8X1, Scenario.MANY_KEYS);
	}

	@Override
	public Client open(Target target, Options options) {
		RedisClient client = RedisClient.create(RedisURI.create(target.host(), target.port()));
		StatefulRedisConnection<String, String> connection = client.connect();
		RedisCommands<String, String> commands = connection.sync();
		if (this.ping) {
			return new PingClient(client, connection, commands);
		}
		String sha = commands.scriptLoad(COMPARE_AND_DELETE);
		return new SetNxClient(client, connection, commands, sha, UUID.randomUUID().toString(), new AtomicLong(),
				options.ttl().toMillis(), options.waitTime());
	}

	private record SetNxClient(RedisClient client, StatefulRedisConnection<String, String> connection,
			RedisCommands<String, String> commands, String sha, String clientId, AtomicLong sequence, long ttlMillis,
			Duration waitTime) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			String redisKey = "bench-floor:" + key;
			String token = this.clientId + ":" + this.sequence.incrementAndGet();
			SetArgs args = SetArgs.Builder.nx().px(this.ttlMillis);
			long deadline = System.nanoTime() + this.waitTime.toNanos();
			while (!"OK".equals(this.commands.set(redisKey, token, args))) {
				if (System.nanoTime() - deadline >= 0) {
					return false;
				}
				LockSupport.parkNanos(POLL_NANOS);
			}
			try {
				criticalSection.run();
				return true;
			}
			finally {
				this.commands.evalsha(this.sha, ScriptOutputType.INTEGER, new String[] { redisKey }, token);
			}
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	private record PingClient(RedisClient client, StatefulRedisConnection<String, String> connection,
			RedisCommands<String, String> commands) implements Client {

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			this.commands.ping();
			criticalSection.run();
			return true;
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

}
