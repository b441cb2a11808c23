package dev.distlock.ltw;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.EnableDistributedLocks;
import dev.distlock.annotation.LockContext;
import dev.distlock.aspectj.DistributedLockAspect;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.test.redis.ConcurrentCalls;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import dev.distlock.unwoven.UnwovenShop;
import org.aspectj.lang.Aspects;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The AspectJ mode with load-time weaving: this module is compiled by javac, and the AspectJ agent on the test JVM
 * (this module's build) weaves {@link Shop} with the aspect that lock-aspectj's {@code META-INF/aop.xml} names as the
 * class is loaded. A bean calling its own locked method is locked, against a real redis-server.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LoadTimeWeavingIntegrationTests {

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void theAgentWeavesTheAspectIntoClassesCompiledByJavacAndItLocksACallOfTheBeanToItself() throws Exception {
		redis.execute("FLUSHALL");
		runner().withUserConfiguration(AspectJMode.class)
			.withBean(Shop.class)
			.run(context -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockBeanPostProcessor.class);
				Shop shop = context.getBean(Shop.class);
				assertThat(AopUtils.isAopProxy(shop)).isFalse();
				assertThat(shop.heldDuringSelfCall("sku-1")).as("the lease of 'stock:sku-1' during this.look()").isTrue();

				int threads = 4;
				int callsPerThread = 40;
				ConcurrentCalls.run(threads, callsPerThread, Duration.ofSeconds(100), (thread) -> shop.buy("sku-2"));
				assertThat(redis.execute("GET", "stock:sku-2")).isEqualTo(Integer.toString(threads * callsPerThread));
			});
		assertThat(Aspects.aspectOf(DistributedLockAspect.class).isConfigured()).isFalse();
	}

	@Test
	void aBeanWhoseLockedMethodIsNotWovenFailsTheStartInsteadOfRunningUnlocked() {
		runner().withUserConfiguration(AspectJMode.class).withBean(UnwovenShop.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("dev.distlock.unwoven.UnwovenShop.purchase has @DistributedLock but is not woven")
				.hasMessageContaining("-javaagent");
		});
		// the same class in the default proxy mode is locked by a proxy, as usual
		runner().withBean(UnwovenShop.class).run(context -> assertThat(context).hasNotFailed()
			.hasSingleBean(DistributedLockBeanPostProcessor.class));
	}

	private static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(mode = AdviceMode.ASPECTJ)
	static class AspectJMode {

	}

	/** Calls its locked methods on {@code this}, which only woven code locks. */
	public static class Shop {

		private final StringRedisTemplate redis;

		private final LockService locks;

		public Shop(StringRedisTemplate redis, LockService locks) {
			this.redis = redis;
			this.locks = locks;
		}

		public void buy(String sku) {
			this.purchase(sku);
		}

		/** A deliberately non-atomic read-modify-write of the stock counter. */
		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "60s")
		public void purchase(String sku) {
			String value = this.redis.opsForValue().get("stock:" + sku);
			int next = (value == null) ? 1 : Integer.parseInt(value) + 1;
			this.redis.opsForValue().set("stock:" + sku, Integer.toString(next));
		}

		public boolean heldDuringSelfCall(String sku) {
			return this.look(sku);
		}

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "5s")
		public boolean look(String sku) {
			return LockContext.current().isPresent() && this.locks.holder("stock:" + sku).isPresent();
		}

	}

}
