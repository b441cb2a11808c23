package dev.distlock.testing.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The scenarios on a real {@code redis-server}, against the application's own Redis engine on the same connection
 * factory and key prefix: another instance's hold keeps the application out until it is released or its time runs out
 * in Redis, and a lease lost in Redis is found lost by its holder.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisLockScenariosIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private LettuceConnectionFactory connectionFactory;

	private RedisLockService app;

	private RedisLockScenarios redis;

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.app = RedisLockService.builder(this.connectionFactory).keyPrefix("inventory-service").build();
		this.redis = RedisLockScenarios.of(this.connectionFactory, "inventory-service");
	}

	@Test
	void aKeyHeldElsewhereKeepsTheApplicationOutUntilReleased(RedisServer server) {
		RedisLockScenarios.Hold hold = this.redis.holdElsewhere("inventory:sku-42");
		assertThat(hold.key()).isEqualTo("inventory:sku-42");
		assertThat(server.execute("EXISTS", "inventory-service:{inventory:sku-42}")).isEqualTo(1L);
		assertThat(this.app.tryAcquire("inventory:sku-42", TTL, Duration.ZERO)).isEmpty();
		assertThat(this.app.holder("inventory:sku-42")).hasValueSatisfying(
				(holder) -> assertThat(holder.fencingToken()).isEqualTo(hold.fencingToken()));
		assertThatIllegalStateException().isThrownBy(() -> this.redis.holdElsewhere("inventory:sku-42"))
			.withMessageContaining("'inventory:sku-42' is held");

		assertThat(hold.release()).isTrue();

		assertThat(hold.isHeld()).isFalse();
		Lease lease = this.app.acquire("inventory:sku-42", TTL, Duration.ZERO);
		assertThat(lease.fencingToken()).isGreaterThan(hold.fencingToken());
		lease.release();
	}

	@Test
	void aKeyHeldElsewhereForAWhileExpiresInRedis(RedisServer server) {
		this.redis.holdElsewhere("inventory:sku-42", Duration.ofMillis(500));
		assertThat(this.app.tryAcquire("inventory:sku-42", TTL, Duration.ZERO)).isEmpty();
		Long pttl = (Long) server.execute("PTTL", "inventory-service:{inventory:sku-42}");
		assertThat(pttl).isPositive().isLessThanOrEqualTo(500L);

		Lease lease = this.app.acquire("inventory:sku-42", TTL, Duration.ofSeconds(30));

		assertThat(lease.isHeld()).isTrue();
		lease.release();
	}

	@Test
	void aLeaseLostInRedisIsFoundLostByItsHolder() {
		Lease lease = this.app.acquire("inventory:sku-42", TTL, Duration.ZERO);

		assertThat(this.redis.loseNow("inventory:sku-42")).isTrue();

		assertThat(this.redis.loseNow("inventory:sku-42")).as("nothing left to lose").isFalse();
		assertThat(lease.isOwned()).isFalse();
		assertThat(lease.isLost()).isTrue();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
	}

	@Test
	void closingReleasesTheHoldsStillHeld() {
		this.redis.holdElsewhere("a");
		this.redis.holdElsewhere("b", Duration.ofMinutes(5));

		this.redis.close();

		await().atMost(Duration.ofSeconds(10)).until(() -> !this.app.isLocked("a") && !this.app.isLocked("b"));
	}

	@AfterEach
	void stop() {
		this.redis.close();
		this.app.close();
		this.connectionFactory.destroy();
	}

}
