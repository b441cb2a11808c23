package dev.distlock.interceptor;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.test.redis.ConcurrentCalls;
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
import org.springframework.aop.support.AopUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @Transactional @DistributedLock} method doing a read-modify-write of a database row: with the lock outside
 * the transaction (the default order) every holder sees the previous holder's committed row, and every commit happens
 * while the lock is still held; with the order reversed the lock is released before the commit and the next holder
 * reads a stale row. The same holds for a locked method that calls another bean's {@code @Transactional} method.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionOrderingIntegrationTests {

	private static final int THREADS = 4;

	private static final int CALLS_PER_THREAD = 25;

	private static final int CALLS = THREADS * CALLS_PER_THREAD;

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void theLockWrapsTheTransactionSoTheNextHolderSeesTheCommittedRow() throws Exception {
		Deposits deposits = depositConcurrently("ordered", Accounts.class);
		assertThat(deposits.balance()).isEqualTo(CALLS);
		assertThat(deposits.commitsUnderLock()).isEqualTo(CALLS);
	}

	@Test
	void withTheOrderReversedTheNextHolderReadsAStaleRow() throws Exception {
		Deposits deposits = depositConcurrently("reversed", Accounts.class, "distlock.advice-order=2147483647");
		assertThat(deposits.balance()).isLessThan(CALLS);
		assertThat(deposits.commits()).isEqualTo(CALLS);
		assertThat(deposits.commitsUnderLock()).isZero();
	}

	@Test
	void theLockWrapsATransactionOfAnInnerMethodSoTheNextHolderSeesTheCommittedRow() throws Exception {
		Deposits deposits = depositConcurrently("inner", Teller.class);
		assertThat(deposits.balance()).isEqualTo(CALLS);
		assertThat(deposits.commitsUnderLock()).isEqualTo(CALLS);
	}

	/** The row's final balance, the number of commits, and how many of them happened while the lock was held. */
	record Deposits(int balance, int commits, int commitsUnderLock) {
	}

	private Deposits depositConcurrently(String database, Class<? extends Depositor> entry, String... properties)
			throws Exception {
		Deposits[] deposits = new Deposits[1];
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
					TransactionAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1",
					"spring.datasource.generate-unique-name=false")
			.withPropertyValues(properties)
			.withBean(Commits.class)
			.withBean(Accounts.class)
			.withBean(Ledger.class)
			.withBean(Teller.class)
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThat(((Advised) context.getBean(Accounts.class)).getAdvisors()).hasSizeGreaterThanOrEqualTo(2); // lock and transaction
				assertThat(AopUtils.isAopProxy(context.getBean(Teller.class))).isTrue(); // lock
				assertThat(AopUtils.isAopProxy(context.getBean(Ledger.class))).isTrue(); // transaction
				Depositor depositor = context.getBean(entry);
				JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
				jdbc.execute("create table account (id int primary key, balance int not null)");
				jdbc.update("insert into account values (1, 0)");
				ConcurrentCalls.run(THREADS, CALLS_PER_THREAD, Duration.ofSeconds(100), (thread) -> depositor.deposit(1));
				Commits commits = context.getBean(Commits.class);
				deposits[0] = new Deposits(jdbc.queryForObject("select balance from account where id = 1", Integer.class),
						commits.total.get(), commits.underLock.get());
			});
		return deposits[0];
	}

	public interface Depositor {

		void deposit(int id);

	}

	/** Adds one to the row's balance, the lock and the transaction on the same method. */
	public static class Accounts implements Depositor {

		private final JdbcTemplate jdbc;

		private final Commits commits;

		public Accounts(JdbcTemplate jdbc, Commits commits) {
			this.jdbc = jdbc;
			this.commits = commits;
		}

		@Override
		@Transactional
		@DistributedLock(key = "'account:' + #id", ttl = "10s", waitTime = "60s")
		public void deposit(int id) {
			int balance = this.jdbc.queryForObject("select balance from account where id = ?", Integer.class, id);
			this.jdbc.update("update account set balance = ? where id = ?", balance + 1, id);
			this.commits.watch();
		}

	}

	/** Takes the lock and leaves the transaction to the ledger it calls. */
	public static class Teller implements Depositor {

		private final Ledger ledger;

		public Teller(Ledger ledger) {
			this.ledger = ledger;
		}

		@Override
		@DistributedLock(key = "'account:' + #id", ttl = "10s", waitTime = "60s")
		public void deposit(int id) {
			this.ledger.deposit(id);
		}

	}

	/** Adds one to the row's balance in a transaction, without a lock of its own. */
	public static class Ledger {

		private final JdbcTemplate jdbc;

		private final Commits commits;

		public Ledger(JdbcTemplate jdbc, Commits commits) {
			this.jdbc = jdbc;
			this.commits = commits;
		}

		@Transactional
		public void deposit(int id) {
			int balance = this.jdbc.queryForObject("select balance from account where id = ?", Integer.class, id);
			this.jdbc.update("update account set balance = ? where id = ?", balance + 1, id);
			this.commits.watch();
		}

	}

	/** Counts commits, and those that happened while the committing thread still held its lock. */
	public static class Commits {

		private final AtomicInteger total = new AtomicInteger();

		private final AtomicInteger underLock = new AtomicInteger();

		/** Watch the current transaction's commit. */
		void watch() {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void beforeCommit(boolean readOnly) {
					// Not synchronisation: it widens the gap between the end of the method and the commit, the window
					// in which a lock released too early lets the next holder read the row before this update is
					// committed.
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
				}

				@Override
				public void afterCommit() {
					Commits.this.total.incrementAndGet();
					if (LockContext.current().filter(Lease::isHeld).isPresent()) {
						Commits.this.underLock.incrementAndGet();
					}
				}

			});
		}

	}

}
