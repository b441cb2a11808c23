package dev.distlock.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.aop.framework.Advised;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @Transactional @DistributedLock} method doing a read-modify-write of a database row: with the lock outside
 * the transaction (the default order) every holder sees the previous holder's committed row; with the order reversed
 * the lock is released before the commit and the next holder reads a stale row.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionOrderingIntegrationTests {

	private static final int THREADS = 4;

	private static final int CALLS_PER_THREAD = 25;

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void theLockWrapsTheTransactionSoTheNextHolderSeesTheCommittedRow() throws Exception {
		assertThat(depositConcurrently("ordered")).isEqualTo(THREADS * CALLS_PER_THREAD);
	}

	@Test
	void withTheOrderReversedTheNextHolderReadsAStaleRow() throws Exception {
		assertThat(depositConcurrently("reversed", "lock.advice-order=2147483647")).isLessThan(THREADS * CALLS_PER_THREAD);
	}

	private int depositConcurrently(String database, String... properties) throws Exception {
		int[] balance = new int[1];
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
					TransactionAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1",
					"spring.datasource.generate-unique-name=false")
			.withPropertyValues(properties)
			.withBean(Accounts.class)
			.run(context -> {
				assertThat(context).hasNotFailed();
				Accounts accounts = context.getBean(Accounts.class);
				assertThat(((Advised) accounts).getAdvisors()).hasSizeGreaterThanOrEqualTo(2); // lock and transaction
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				jdbc.execute("create table account (id int primary key, balance int not null)");
				jdbc.update("insert into account values (1, 0)");
				ExecutorService pool = Executors.newFixedThreadPool(THREADS);
				try {
					CountDownLatch start = new CountDownLatch(1);
					List<Future<?>> futures = new ArrayList<>();
					for (int t = 0; t < THREADS; t++) {
						futures.add(pool.submit(() -> {
							start.await();
							for (int i = 0; i < CALLS_PER_THREAD; i++) {
								accounts.deposit(1);
							}
							return null;
						}));
					}
					start.countDown();
					for (Future<?> future : futures) {
						future.get(100, TimeUnit.SECONDS);
					}
				}
				finally {
					pool.shutdownNow();
				}
				balance[0] = jdbc.queryForObject("select balance from account where id = 1", Integer.class);
			});
		return balance[0];
	}

	public static class Accounts {

		private final JdbcTemplate jdbc;

		public Accounts(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Transactional
		@DistributedLock(key = "'account:' + #id", ttl = "10s", waitTime = "60s")
		public void deposit(int id) {
			int balance = this.jdbc.queryForObject("select balance from account where id = ?", Integer.class, id);
			this.jdbc.update("update account set balance = ? where id = ?", balance + 1, id);
			// Not synchronisation: it widens the gap between the end of the method and the commit, the window in
			// which a lock released too early lets the next holder read the row before this update is committed.
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void beforeCommit(boolean readOnly) {
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
				}
			});
		}

	}

}
