package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import io.lettuce.core.ClientOptions;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One application instance of {@code RedlockThreeJvmsIntegrationTests}, run in a JVM of its own: a Redlock service on
 * the given nodes whose threads increment a counter in the storage server by read-modify-write, each write fenced by
 * the lease's token. Arguments: storage port, threads, increments per thread, start-file, node ports... It waits for
 * the start-file to exist, so that the instances start their contention together.
 */
public final class RedlockJvmWorker {

	private RedlockJvmWorker() {
	}

	public static void main(String[] args) throws Exception {
		int storagePort = Integer.parseInt(args[0]);
		int threads = Integer.parseInt(args[1]);
		int increments = Integer.parseInt(args[2]);
		java.nio.file.Path startFile = java.nio.file.Path.of(args[3]);
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		for (int i = 4; i < args.length; i++) {
			factories.add(factory(Integer.parseInt(args[i]), RedlockNodesFixture.NODE_TIMEOUT));
		}
		LettuceConnectionFactory storage = factory(storagePort, Duration.ofSeconds(5));
		FencedStore store = new FencedStore(LockTestSupport.template(storage));
		RedlockLockService service = RedlockLockService.builder(new ArrayList<RedisConnectionFactory>(factories))
			.nodeTimeout(RedlockNodesFixture.NODE_TIMEOUT)
			.build();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		int rejected = 0;
		try {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (!java.nio.file.Files.exists(startFile)) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("No start signal");
				}
				Thread.sleep(10); // a cross-process start signal: a file the test creates
			}
			CountDownLatch go = new CountDownLatch(1);
			List<Future<Integer>> work = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				work.add(pool.submit(() -> {
					go.await();
					int refused = 0;
					for (int i = 0; i < increments; i++) {
						try (Lease lease = service.acquire("jvm-counter", Duration.ofSeconds(5), Duration.ofSeconds(60))) {
							if (!store.increment("jvm-counter", lease.fencingToken()).accepted()) {
								refused++;
							}
						}
					}
					return refused;
				}));
			}
			go.countDown();
			for (Future<Integer> future : work) {
				rejected += future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
			service.close();
			factories.forEach(LettuceConnectionFactory::destroy);
			storage.destroy();
		}
		System.out.println("DONE rejected=" + rejected);
	}

	private static LettuceConnectionFactory factory(int port, Duration timeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder()
					.commandTimeout(timeout)
					.clientOptions(ClientOptions.builder()
						.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
						.build())
					.build());
		factory.afterPropertiesSet();
		factory.start();
		RedlockNodesFixture.connect(factory);
		return factory;
	}

}
