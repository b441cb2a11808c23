package dev.distlock.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;

import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisSentinelSet;
import dev.distlock.test.redis.RedisServer;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.awaitility.Awaitility.await;

/**
 * Opens connection factories and lock services against one Redis address, each factory its own client as a separate
 * application instance would have, and closes everything it opened.
 */
public final class LockTestSupport implements AutoCloseable {

	/** Short enough that a test of an unreachable server ends quickly, long enough for a loaded 2-core machine. */
	public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	/**
	 * The lease time of tests that need the watchdog to keep a lease, with {@link #QUICK_RENEWALS}: renewed every
	 * 600 ms, such a lease outlives a stall of 5.4 s of the JVM, of its renewal thread or of Redis, several times the
	 * longest a loaded 2-core machine shows (1 to 2 s). A 1 s lease renewed at the default ratio (every 333 ms) is lost
	 * by a stall of 0.7 s, and was, now and then, in CI (issue 32).
	 */
	public static final Duration RENEWED_TTL = Duration.ofSeconds(6);

	/** The renewal ratio of services whose tests wait for renewals of {@link #RENEWED_TTL} leases: see there. */
	public static final double QUICK_RENEWALS = 0.1;

	/** How long a test waits for a renewal due within a second: room for any stall a loaded machine shows. */
	public static final Duration RENEWAL_DEADLINE = Duration.ofSeconds(30);

	private final RedisConfiguration configuration;

	private final List<AutoCloseable> opened = new ArrayList<>();

	private final boolean jedis;

	/** Lettuce's client options; for a cluster, whether it refreshes its topology as Boot's adaptive refresh does. */
	private final @Nullable LettuceClientConfiguration lettuce;

	/**
	 * The engine paths of the services this support builds (issue 11: template-only, listener container). The
	 * system properties {@code distlock.test.template-only=true} and {@code distlock.test.own-subscription=true}
	 * change the default, to run whole suites on another path.
	 */
	private EnginePaths paths = new EnginePaths(!Boolean.getBoolean("distlock.test.template-only"),
			!Boolean.getBoolean("distlock.test.own-subscription"));

	public LockTestSupport(String host, int port) {
		this(host, port, COMMAND_TIMEOUT);
	}

	public LockTestSupport(String host, int port, Duration commandTimeout) {
		this(new RedisStandaloneConfiguration(host, port), false, LettuceClientConfiguration.builder()
			.commandTimeout(commandTimeout)
			.build());
	}

	private LockTestSupport(RedisConfiguration configuration, boolean jedis, @Nullable LettuceClientConfiguration lettuce) {
		this.configuration = configuration;
		this.jedis = jedis;
		this.lettuce = lettuce;
	}

	/** Connection factories on Jedis instead of Lettuce. */
	public static LockTestSupport jedis(RedisServer server) {
		return new LockTestSupport(new RedisStandaloneConfiguration(server.host(), server.port()), true, null);
	}

	/** Jedis factories on a cluster, seeded with every node. */
	public static LockTestSupport jedisForCluster(RedisCluster cluster) {
		return new LockTestSupport(new RedisClusterConfiguration(cluster.seedNodes()), true, null);
	}

	/** Jedis factories that ask the sentinels for the master. */
	public static LockTestSupport jedisForSentinels(RedisSentinelSet sentinels) {
		return new LockTestSupport(new RedisSentinelConfiguration(sentinels.masterName(),
				new java.util.HashSet<>(sentinels.sentinelNodes())), true, null);
	}

	public static LockTestSupport forServer(RedisServer server) {
		return new LockTestSupport(server.host(), server.port());
	}

	/**
	 * Lettuce factories on a cluster, seeded with every node, with adaptive topology refresh as
	 * {@code spring.data.redis.lettuce.cluster.refresh.adaptive=true} configures it (on redirects and reconnects), or
	 * with Lettuce's defaults (no refresh: Boot's default).
	 */
	public static LockTestSupport forCluster(RedisCluster cluster, boolean adaptiveRefresh) {
		return forCluster(cluster, adaptiveRefresh, null);
	}

	/** As {@link #forCluster(RedisCluster, boolean)}, also refreshing every {@code period} if not null. */
	public static LockTestSupport forCluster(RedisCluster cluster, boolean adaptiveRefresh, @Nullable Duration period) {
		ClusterTopologyRefreshOptions.Builder refresh = ClusterTopologyRefreshOptions.builder();
		if (adaptiveRefresh) {
			refresh.enableAllAdaptiveRefreshTriggers();
		}
		if (period != null) {
			refresh.enablePeriodicRefresh(period);
		}
		LettuceClientConfiguration lettuce = LettuceClientConfiguration.builder()
			.commandTimeout(COMMAND_TIMEOUT)
			.clientOptions(ClusterClientOptions.builder().topologyRefreshOptions(refresh.build()).build())
			.build();
		return new LockTestSupport(new RedisClusterConfiguration(cluster.seedNodes()), false, lettuce);
	}

	/** Lettuce factories that ask the sentinels for the master (and follow it when it fails over). */
	public static LockTestSupport forSentinels(RedisSentinelSet sentinels) {
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration(sentinels.masterName(),
				new java.util.HashSet<>(sentinels.sentinelNodes()));
		return new LockTestSupport(configuration, false, LettuceClientConfiguration.builder()
			.commandTimeout(COMMAND_TIMEOUT)
			.build());
	}

	/** Build every service with these engine paths. */
	public LockTestSupport paths(EnginePaths paths) {
		this.paths = paths;
		return this;
	}

	public synchronized RedisConnectionFactory connectionFactory() {
		if (this.jedis) {
			JedisClientConfiguration client = JedisClientConfiguration.builder()
				.connectTimeout(COMMAND_TIMEOUT)
				.readTimeout(COMMAND_TIMEOUT)
				.build();
			JedisConnectionFactory factory = (this.configuration instanceof RedisClusterConfiguration cluster)
					? new JedisConnectionFactory(cluster, client)
					: (this.configuration instanceof RedisSentinelConfiguration sentinel)
							? new JedisConnectionFactory(sentinel, client)
							: new JedisConnectionFactory((RedisStandaloneConfiguration) this.configuration, client);
			factory.afterPropertiesSet();
			factory.start();
			this.opened.add(factory::destroy);
			return factory;
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(this.configuration, this.lettuce);
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	/** A Lettuce factory with its own command timeout: short ones make the client give up on calls a fault holds back. */
	public synchronized LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(this.configuration,
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	/** A service on its own connection factory: one simulated application instance. */
	public RedisLockService service() {
		return service(RedisLockService.builder(connectionFactory()));
	}

	public synchronized RedisLockService service(RedisLockServiceBuilder builder) {
		RedisLockService service = builder.paths(this.paths).build();
		this.opened.add(0, service);
		return service;
	}

	/** A service on its own connection factory whose watchdog renews at {@link #QUICK_RENEWALS}. */
	public RedisLockService quicklyRenewingService() {
		return service(RedisLockService.builder(connectionFactory()).renewalRatio(QUICK_RENEWALS));
	}

	/**
	 * Wait ({@link #RENEWAL_DEADLINE} at most) for a renewal of {@code lease} by {@code service}'s watchdog that Redis
	 * answered "still yours" after this call began. Such a renewal set the lease's expiry to its full lease time from
	 * when it was sent, later than where its acquisition (or an earlier renewal) had put it: the lease outlives that.
	 * Judged by the lease's snapshot, not by a clock, so a late renewal makes the wait longer, never the test fail.
	 */
	public static void awaitRenewal(RedisLockService service, Lease lease) {
		Instant since = Instant.now();
		await("a renewal of " + lease).atMost(RENEWAL_DEADLINE).pollInterval(Duration.ofMillis(20)).until(() -> {
			Instant last = service.activeLeases()
				.stream()
				.filter(snapshot -> snapshot.owner().equals(lease.owner()) && snapshot.key().equals(lease.key()))
				.map(LeaseSnapshot::lastRenewal)
				.filter(java.util.Objects::nonNull)
				.findFirst()
				.orElse(null);
			return last != null && last.isAfter(since);
		});
	}

	public StringRedisTemplate template() {
		return template(connectionFactory());
	}

	/**
	 * The keys matching {@code pattern} on {@code server}, less the receipts that last releases leave for a short time
	 * ({@code <lease>:r:<owner>}, {@code <lease>:f:<call id>}; see {@code LockScripts.RELEASE}): what a test means by
	 * "nothing is left of the lock in Redis".
	 */
	public static List<String> leftKeys(RedisServer server, String pattern) {
		List<String> keys = new ArrayList<>();
		for (Object key : (List<?>) java.util.Objects.requireNonNull(server.execute("KEYS", pattern))) {
			keys.add(String.valueOf(key));
		}
		return withoutReceipts(keys);
	}

	/** {@link #leftKeys(RedisServer, String)} of every key. */
	public static List<String> leftKeys(RedisServer server) {
		return leftKeys(server, "*");
	}

	/** {@code keys} less release receipts (see {@link #leftKeys(RedisServer, String)}). */
	public static List<String> withoutReceipts(java.util.Collection<String> keys) {
		return keys.stream().filter(key -> !isReceipt(key)).sorted().toList();
	}

	/** Whether {@code key} is a release receipt: {@code <lease>:r:<owner>} or {@code <lease>:f:<call id>}. */
	public static boolean isReceipt(String key) {
		int tag = key.lastIndexOf('}');
		return tag >= 0 && (key.startsWith(LockScripts.RECEIPT_INFIX, tag + 1) || key.startsWith(":f:", tag + 1));
	}

	public static StringRedisTemplate template(RedisConnectionFactory factory) {
		StringRedisTemplate template = new StringRedisTemplate(factory);
		template.afterPropertiesSet();
		return template;
	}

	@Override
	public synchronized void close() {
		for (AutoCloseable closeable : this.opened) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// keep closing the rest
			}
		}
		this.opened.clear();
	}

	/**
	 * The script calls (EVALSHA, EVAL) {@code server} ran so far, from {@code INFO commandstats}: every attempt of a
	 * waiter is one. Commands that scripts run inside are not counted, nor the INFO itself.
	 */
	public static long scriptCalls(RedisServer server) {
		long calls = 0;
		for (String line : String.valueOf(server.execute("INFO", "commandstats")).split("\r?\n")) {
			if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
				int from = line.indexOf("calls=") + "calls=".length();
				calls += Long.parseLong(line.substring(from, line.indexOf(',', from)));
			}
		}
		return calls;
	}

	/**
	 * {@code factory} behind an application's wrapper (for metrics or tracing): it only delegates, and shows neither
	 * the client's type nor its settings.
	 */
	public static RedisConnectionFactory wrapped(RedisConnectionFactory factory) {
		return new WrappedFactory(factory);
	}

	private record WrappedFactory(RedisConnectionFactory delegate) implements RedisConnectionFactory {

		@Override
		public boolean getConvertPipelineAndTxResults() {
			return this.delegate.getConvertPipelineAndTxResults();
		}

		@Override
		public org.springframework.data.redis.connection.RedisConnection getConnection() {
			return this.delegate.getConnection();
		}

		@Override
		public org.springframework.data.redis.connection.RedisClusterConnection getClusterConnection() {
			return this.delegate.getClusterConnection();
		}

		@Override
		public org.springframework.data.redis.connection.RedisSentinelConnection getSentinelConnection() {
			return this.delegate.getSentinelConnection();
		}

		@Override
		public org.springframework.dao.DataAccessException translateExceptionIfPossible(RuntimeException ex) {
			return ((org.springframework.dao.support.PersistenceExceptionTranslator) this.delegate)
				.translateExceptionIfPossible(ex);
		}

	}

}
