package dev.distlock.aspectj;

import java.time.Duration;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.EnableDistributedLocks;
import dev.distlock.annotation.LockContext;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.interceptor.DistributedLockInterceptor;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import dev.distlock.test.redis.ConcurrentCalls;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.aspectj.lang.Aspects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
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
 * The AspectJ mode with real compile-time weaving: this class and its beans are compiled by ajc with
 * {@link DistributedLockAspect} (this module's build), as an application's classes would be, and run against a real
 * redis-server. A bean calling its own locked method ({@code this.purchase()}) is locked in AspectJ mode, and is not in
 * the default proxy mode, which only sees calls that come through the proxy.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AspectJModeIntegrationTests {

	private static final int THREADS = 4;

	private static final int CALLS_PER_THREAD = 60;

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@BeforeEach
	void flush() {
		redis.execute("FLUSHALL");
	}

	private static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s")
			.withBean(Shop.class);
	}

	private static DistributedLockAspect aspect() {
		return Aspects.aspectOf(DistributedLockAspect.class);
	}

	@Test
	void aspectjModeLocksACallOfTheBeanToItself() {
		runner().withUserConfiguration(AspectJMode.class).withBean(PrivateShop.class).run(context -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(DistributedLockBeanPostProcessor.class)
				.hasSingleBean(DistributedLockInterceptor.class);
			Shop shop = context.getBean(Shop.class);
			assertThat(AopUtils.isAopProxy(shop)).as("no proxy in AspectJ mode").isFalse();
			assertThat(context.getBean(DistributedLockAspect.class)).isSameAs(aspect());
			assertThat(aspect().isConfigured()).isTrue();

			Seen selfCall = shop.lookThroughSelfCall("sku-1");
			assertThat(selfCall.inLockContext()).isTrue();
			assertThat(selfCall.heldInRedis()).as("the lease of 'stock:sku-1' during this.look()").isTrue();
			Seen metaAnnotated = shop.lookThroughMetaAnnotatedSelfCall("sku-1");
			assertThat(metaAnnotated.heldInRedis()).as("through an annotation that carries @DistributedLock").isTrue();
			Seen privateCall = context.getBean(PrivateShop.class).lookThroughPrivateCall("sku-1");
			assertThat(privateCall.inLockContext()).isTrue();
			assertThat(privateCall.heldInRedis()).as("a private method is locked too").isTrue();
			assertThat(context.getBean(LockService.class).isLocked("stock:sku-1")).as("released after the call").isFalse();
		});
		assertThat(aspect().isConfigured()).as("released by the closed context").isFalse();
	}

	@Test
	void aspectjModeLosesNoUpdateWhenThreadsCallTheLockedMethodThroughTheBeanItself() {
		runner().withUserConfiguration(AspectJMode.class).run(context -> {
			int calls = callConcurrently(context.getBean(Shop.class));
			assertThat(redis.execute("GET", "stock:sku-2")).isEqualTo(Integer.toString(calls));
			// nothing is left but the short-lived receipts of last releases (<lease>:r:<owner>)
			assertThat((List<?>) redis.execute("KEYS", "lock:*"))
				.allSatisfy(key -> assertThat(key.toString()).matches("lock:\\{[^}]*}:r:.*"));
			assertThat(redis.execute("KEYS", "lock:{*}")).isEqualTo(List.of());
		});
	}

	@Test
	void proxyModeDoesNotLockACallOfTheBeanToItself() {
		runner().run(context -> {
			assertThat(context).hasNotFailed().hasSingleBean(DistributedLockBeanPostProcessor.class);
			assertThat(aspect().isConfigured()).isFalse();
			Shop shop = context.getBean(Shop.class);
			assertThat(AopUtils.isAopProxy(shop)).isTrue();
			Seen throughProxy = shop.look("sku-1");
			assertThat(throughProxy.inLockContext()).isTrue();
			assertThat(throughProxy.heldInRedis()).isTrue();
			Seen selfCall = shop.lookThroughSelfCall("sku-1");
			assertThat(selfCall.inLockContext()).isFalse();
			assertThat(selfCall.heldInRedis()).as("no lease of 'stock:sku-1' during this.look()").isFalse();
		});
	}

	@Test
	void theExplicitProxyModeIsTheDefaultMode() {
		runner().withUserConfiguration(ProxyMode.class).run(context -> {
			assertThat(context).hasNotFailed().hasSingleBean(DistributedLockBeanPostProcessor.class);
			assertThat(AopUtils.isAopProxy(context.getBean(Shop.class))).isTrue();
			assertThat(aspect().isConfigured()).isFalse();
		});
	}

	@Test
	void aspectjModeWithTheStarterOffLeavesTheAspectUnconfiguredAndTheMethodsUnlocked() {
		runner().withUserConfiguration(AspectJMode.class).withPropertyValues("distlock.enabled=false").run(context -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(DistributedLockInterceptor.class)
				.doesNotHaveBean(DistributedLockBeanPostProcessor.class);
			assertThat(aspect().isConfigured()).isFalse();
			assertThat(context.getBean(Shop.class).lookThroughSelfCall("sku-1").inLockContext()).isFalse();
		});
	}

	@Test
	void theUnconfiguredAspectLetsTheMethodRunUnlocked() {
		assertThat(aspect().isConfigured()).isFalse();
		Shop shop = new Shop(null, null);
		Seen seen = shop.lookThroughSelfCall("sku-1");
		assertThat(seen.inLockContext()).isFalse();
	}

	@Test
	void aspectjModeChecksTheDeclarationsAtStartup() {
		runner().withUserConfiguration(AspectJMode.class).withBean(BadKey.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(InvalidLockDeclarationException.class)
				.hasMessageContaining("BadKey.run")
				.hasMessageContaining("#missing");
		});
		runner().withUserConfiguration(AspectJMode.class).withBean(InterfaceDeclared.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(InvalidLockDeclarationException.class)
				.hasMessageContaining("InterfaceDeclared.run")
				.hasMessageContaining("none of which the AspectJ aspect sees");
		});
		assertThat(aspect().isConfigured()).isFalse();
	}

	private static int callConcurrently(Shop shop) throws Exception {
		return ConcurrentCalls.run(THREADS, CALLS_PER_THREAD, Duration.ofSeconds(100), (thread) -> shop.buy("sku-2"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(mode = AdviceMode.ASPECTJ)
	static class AspectJMode {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class ProxyMode {

	}

	/** What a locked method saw: a lease in its lock context, and the lease in Redis. */
	record Seen(boolean inLockContext, boolean heldInRedis) {

		static Seen now(@Nullable LockService locks, String key) {
			return new Seen(LockContext.current().isPresent(), locks != null && locks.holder(key).isPresent());
		}

	}

	/** Its public methods call its locked methods on {@code this}, which a proxy does not see. */
	public static class Shop {

		private final @Nullable StringRedisTemplate redis;

		private final @Nullable LockService locks;

		public Shop(@Nullable StringRedisTemplate redis, @Nullable LockService locks) {
			this.redis = redis;
			this.locks = locks;
		}

		/** A purchase, as a controller would call it: the lock is taken by the method it calls on itself. */
		public void buy(String sku) {
			this.purchase(sku);
		}

		/** A deliberately non-atomic read-modify-write of the stock counter. */
		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "60s")
		public void purchase(String sku) {
			StringRedisTemplate redis = this.redis;
			String value = redis.opsForValue().get("stock:" + sku);
			int next = (value == null) ? 1 : Integer.parseInt(value) + 1;
			redis.opsForValue().set("stock:" + sku, Integer.toString(next));
		}

		public Seen lookThroughSelfCall(String sku) {
			return this.look(sku);
		}

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "5s")
		public Seen look(String sku) {
			return seen("stock:" + sku);
		}

		public Seen lookThroughMetaAnnotatedSelfCall(String sku) {
			return this.metaAnnotatedLook(sku);
		}

		@StockLock
		public Seen metaAnnotatedLook(String sku) {
			return seen("stock:" + sku);
		}

		private Seen seen(String key) {
			return Seen.now(this.locks, key);
		}

	}

	/** A locked private method: rejected in proxy mode (a proxy cannot call it), locked in AspectJ mode. */
	public static class PrivateShop {

		private final LockService locks;

		public PrivateShop(LockService locks) {
			this.locks = locks;
		}

		public Seen lookThroughPrivateCall(String sku) {
			return privateLook(sku);
		}

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "5s")
		private Seen privateLook(String sku) {
			return Seen.now(this.locks, "stock:" + sku);
		}

	}

	/** A team's own annotation, carrying {@code @DistributedLock}. */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.METHOD)
	@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "5s")
	@interface StockLock {

	}

	public static class BadKey {

		@DistributedLock(key = "#missing")
		public void run(String name) {
		}

	}

	interface Job {

		@DistributedLock(key = "'job'")
		void run();

	}

	public static class InterfaceDeclared implements Job {

		@Override
		public void run() {
		}

	}

}
