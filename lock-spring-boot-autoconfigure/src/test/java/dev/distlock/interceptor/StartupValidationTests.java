package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Consumer;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.Lease;
import dev.distlock.core.LockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import kotlin.coroutines.Continuation;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Every declaration that cannot work fails the application's start, with a message that names the class, the method
 * and what is wrong with it.
 */
@ExtendWith(RedisServerExtension.class)
class StartupValidationTests {

	private static final String[] NO_PROPERTIES = {};

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	private static void assertStartFails(Class<?> beanClass, String... messageParts) {
		assertStartFails(beanClass, NO_PROPERTIES, messageParts);
	}

	private static void assertStartFails(Class<?> beanClass, String[] properties, String... messageParts) {
		assertStartFails(DistributedLockInterceptorIntegrationTests.runner(redis).withPropertyValues(properties), beanClass,
				(cause) -> {
					for (String part : messageParts) {
						assertThat(cause).hasMessageContaining(part);
					}
				});
	}

	/** The whole message: the method's description, then {@code message}. */
	private static void assertStartFailsWithMessage(Class<?> beanClass, String[] properties, String method,
			String message) {
		assertStartFails(DistributedLockInterceptorIntegrationTests.runner(redis).withPropertyValues(properties), beanClass,
				(cause) -> assertThat(cause).hasMessage(beanClass.getName() + "." + method + ": " + message));
	}

	private static void assertStartFails(ApplicationContextRunner runner, Class<?> beanClass,
			Consumer<Throwable> failure) {
		runner.withBean(beanClass).run((AssertableApplicationContext context) -> {
			assertThat(context).hasFailed();
			Throwable cause = context.getStartupFailure();
			while (!(cause instanceof InvalidLockDeclarationException) && cause.getCause() != null) {
				cause = cause.getCause();
			}
			assertThat(cause).isInstanceOf(InvalidLockDeclarationException.class)
				.hasMessageContaining(beanClass.getName() + ".");
			failure.accept(cause);
		});
	}

	@Test
	void invalidSpel() {
		assertStartFails(InvalidSpel.class, "buy(String)", "#sku +", "not valid SpEL");
	}

	@Test
	void unknownParameterName() {
		assertStartFails(UnknownParameter.class, "buy(String, int)", "#skew", "not a parameter", "#sku, #quantity");
	}

	@Test
	void parameterIndexOutOfRange() {
		assertStartFails(IndexOutOfRange.class, "buy(String)", "#p3");
	}

	@Test
	void unknownBean() {
		assertStartFails(UnknownBean.class, "buy(String)", "bean 'pricing'", "does not exist");
	}

	@Test
	void missingKey() {
		assertStartFails(MissingKey.class, "buy(String)", "'key'");
	}

	@Test
	void unparsableTtl() {
		assertStartFails(UnparsableTtl.class, "buy(String)", "'ttl'", "ten seconds", "not a duration");
	}

	@Test
	void zeroTtl() {
		assertStartFails(ZeroTtl.class, "buy(String)", "'ttl'", "at least 1ms");
	}

	@Test
	void ttlLongerThanAYear() {
		assertStartFailsWithMessage(YearLongTtl.class, new String[] { "inventory.lock.ttl=400d" }, "buy(String)",
				"@DistributedLock attribute 'ttl' must be at most 365 days, but was \"${inventory.lock.ttl}\" "
						+ "(resolved to \"400d\")");
	}

	@Test
	void maxHoldShorterThanTheTtl() {
		assertStartFailsWithMessage(ShortMaxHold.class, NO_PROPERTIES, "buy(String)",
				"@DistributedLock attribute 'maxHold' must be at least the lease time (PT10S), but was \"5s\"");
	}

	@Test
	void maxHoldLongerThanAYear() {
		assertStartFails(YearLongMaxHold.class, "buy(String)", "'maxHold'", "must be at most 365 days");
	}

	@Test
	void defaultMaxHoldShorterThanTheDefaultTtl() {
		assertStartFailsWithMessage(DefaultMaxHold.class, new String[] { "distlock.max-hold=10s" }, "buy(String)",
				"@DistributedLock attribute 'maxHold' must be at least the lease time (PT30S, distlock.default-ttl), "
						+ "but was PT10S (distlock.max-hold, as the declaration sets none): set a maxHold of the "
						+ "method's own, or a shorter ttl");
	}

	@Test
	void defaultMaxHoldIsCheckedAgainstTheMethodsTtl() {
		assertStartFails(TtlAboveDefaultMaxHold.class, new String[] { "distlock.max-hold=1m" }, "buy(String)",
				"'maxHold'", "(PT2M)", "distlock.max-hold");
	}

	@Test
	void negativeWaitTime() {
		assertStartFails(NegativeWait.class, "buy(String)", "'waitTime'", "must not be negative");
	}

	@Test
	void fairReadWriteLock() {
		assertStartFailsWithMessage(FairRead.class, NO_PROPERTIES, "buy(String)", "@DistributedLock sets 'fair' = true "
				+ "and 'mode' = READ: fair read-write locks are not supported; choose one");
	}

	@Test
	void outOfRangeLiteralsAreQuoted() {
		assertStartFailsWithMessage(ZeroTtl.class, NO_PROPERTIES, "buy(String)",
				"@DistributedLock attribute 'ttl' must be at least 1ms, but was \"0s\"");
		assertStartFailsWithMessage(NegativeWait.class, NO_PROPERTIES, "buy(String)",
				"@DistributedLock attribute 'waitTime' must not be negative, but was \"-1s\"");
	}

	@Test
	void outOfRangePlaceholdersShowTheDeclaredAndTheResolvedValue() {
		assertStartFailsWithMessage(ResolvablePlaceholder.class, new String[] { "inventory.lock.ttl=0ms" }, "buy(String)",
				"@DistributedLock attribute 'ttl' must be at least 1ms, but was \"${inventory.lock.ttl}\" "
						+ "(resolved to \"0ms\")");
		assertStartFailsWithMessage(PlaceholderWait.class, new String[] { "inventory.lock.wait=-1s" }, "buy(String)",
				"@DistributedLock attribute 'waitTime' must not be negative, but was \"${inventory.lock.wait}\" "
						+ "(resolved to \"-1s\")");
	}

	@Test
	void outOfRangeDefaultsAreRejectedWhenTheSourceIsMade() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockOperationSource(null, null, Duration.ZERO, Duration.ZERO))
			.withMessageContaining("defaultTtl");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LockOperationSource(null, null, Duration.ofSeconds(1), Duration.ofSeconds(-1)))
			.withMessageContaining("defaultWaitTime");
	}

	@Test
	void unresolvablePlaceholder() {
		assertStartFails(UnresolvablePlaceholder.class, "buy(String)", "'ttl'", "inventory.lock.ttl");
	}

	@Test
	void placeholderResolvingToNoDuration() {
		assertStartFailsWithMessage(ResolvablePlaceholder.class, new String[] { "inventory.lock.ttl=soon" }, "buy(String)",
				"@DistributedLock attribute 'ttl' is \"${inventory.lock.ttl}\" (resolved to \"soon\"), which is not a "
						+ "duration (examples: \"30s\", \"500ms\", \"PT2S\")");
	}

	@Test
	void privateMethod() {
		assertStartFails(PrivateMethod.class, "buy(String)", "private method", "cannot intercept");
	}

	@Test
	void finalMethod() {
		assertStartFails(FinalMethod.class, "buy(String)", "final method");
	}

	@Test
	void completableFutureAndCompletionStageReturnTypesAreLocked() {
		for (Class<?> beanClass : List.of(FutureReturn.class, CompletionStageReturn.class)) {
			DistributedLockInterceptorIntegrationTests.runner(redis).withBean(beanClass)
				.run((context) -> assertThat(context).hasNotFailed());
		}
	}

	@Test
	void otherFutureReturnTypes() {
		assertStartFails(PlainFutureReturn.class, "buy(String)", "returns Future",
				"Declare the return type CompletableFuture or CompletionStage");
		assertStartFails(FutureSubclassReturn.class, "buy(String)", "returns Subclass",
				"Declare the return type CompletableFuture or CompletionStage");
	}

	@Test
	void aFutureMethodsDeclarationIsCheckedAsAnyOther() {
		assertStartFails(FutureWithUnknownParameter.class, "buy(String)", "#skew", "not a parameter");
	}

	@Test
	void reactiveReturnTypesAreLockedPerSubscription() {
		// ReactiveDistributedLockIntegrationTests shows how; their declarations are valid
		for (Class<?> beanClass : java.util.List.of(MonoReturn.class, FluxReturn.class, PublisherReturn.class)) {
			DistributedLockInterceptorIntegrationTests.runner(redis).withBean(beanClass)
				.run((context) -> assertThat(context).hasNotFailed());
		}
	}

	@Test
	void kotlinSuspendFunctionIsLockedWithCoroutinesReactorOnTheClasspath() {
		// the Kotlin tests (src/test/kotlin, CoroutineLockIntegrationTests) run real suspend functions
		DistributedLockInterceptorIntegrationTests.runner(redis).withBean(SuspendFunction.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void unknownFailureHandler() {
		assertStartFailsWithMessage(UnknownHandler.class, NO_PROPERTIES, "buy(String)",
				"@DistributedLock attribute 'failureHandler' names bean 'busyHandler', which does not exist");
	}

	@Test
	void failureHandlerThatIsNotALockFailureHandler() {
		assertStartFails(DistributedLockInterceptorIntegrationTests.runner(redis)
			.withUserConfiguration(PricingConfiguration.class), NotAHandler.class,
				(cause) -> assertThat(cause).hasMessage(NotAHandler.class.getName() + ".buy(String): @DistributedLock "
						+ "attribute 'failureHandler' names bean 'pricing', which is a " + LockedBeans.Regions.class.getName()
						+ ", not a " + LockFailureHandler.class.getName()));
	}

	@Test
	void aFailureHandlerDefinedAfterTheBeanThatNamesItIsAccepted() {
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withUserConfiguration(HandlerDefinedAfterItsUser.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(callWhileBusy(context)).isEqualTo("busy");
			});
	}

	@Test
	void aLazyFailureHandlerIsAcceptedAndStaysLazy() {
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withUserConfiguration(LazyHandler.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBeanFactory().containsSingleton("busyHandler")).isFalse();
				assertThat(callWhileBusy(context)).isEqualTo("busy");
			});
	}

	@Test
	void aLazyBeanNamingAnUnknownFailureHandlerFailsWhenItIsCreated() {
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withUserConfiguration(LazyUserOfUnknownHandler.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThatExceptionOfType(BeanCreationException.class).isThrownBy(() -> context.getBean(UnknownHandler.class))
					.havingRootCause()
					.isInstanceOf(InvalidLockDeclarationException.class)
					.withMessage(UnknownHandler.class.getName() + ".buy(String): @DistributedLock attribute "
							+ "'failureHandler' names bean 'busyHandler', which does not exist");
			});
	}

	@Test
	void failureHandlerTogetherWithOnFailure() {
		assertStartFails(DistributedLockInterceptorIntegrationTests.runner(redis)
			.withUserConfiguration(BusyHandlerConfiguration.class), HandlerAndSkip.class,
				(cause) -> assertThat(cause).hasMessage(HandlerAndSkip.class.getName() + ".buy(String): @DistributedLock "
						+ "sets both 'failureHandler' (\"busyHandler\") and 'onFailure' (SKIP): choose one, the handler "
						+ "or onFailure"));
	}

	/** Calls {@link HandledBuy#buy} while another thread holds its key, so that it goes to its failure handler. */
	private static @Nullable String callWhileBusy(AssertableApplicationContext context) {
		LockService locks = context.getBean(LockService.class);
		Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO))
			.join();
		try {
			return context.getBean(HandledBuy.class).buy("sku-1");
		}
		finally {
			held.release();
		}
	}

	@Test
	void aValidDeclarationStarts() {
		DistributedLockInterceptorIntegrationTests.runner(redis).withBean(Valid.class)
			.withUserConfiguration(PricingConfiguration.class)
			.withPropertyValues("inventory.lock.ttl=15s")
			.run(context -> assertThat(context).hasNotFailed());
	}

	public static class InvalidSpel {

		@DistributedLock(key = "#sku +")
		public void buy(String sku) {
		}

	}

	public static class UnknownParameter {

		@DistributedLock(key = "'inventory:' + #skew")
		public void buy(String sku, int quantity) {
		}

	}

	public static class IndexOutOfRange {

		@DistributedLock(key = "#p3")
		public void buy(String sku) {
		}

	}

	public static class UnknownBean {

		@DistributedLock(key = "#sku + @pricing.region()")
		public void buy(String sku) {
		}

	}

	public static class MissingKey {

		@DistributedLock(ttl = "10s")
		public void buy(String sku) {
		}

	}

	public static class UnparsableTtl {

		@DistributedLock(key = "#sku", ttl = "ten seconds")
		public void buy(String sku) {
		}

	}

	public static class YearLongTtl {

		@DistributedLock(key = "#sku", ttl = "${inventory.lock.ttl}")
		public void buy(String sku) {
		}

	}

	public static class ShortMaxHold {

		@DistributedLock(key = "#sku", ttl = "10s", maxHold = "5s")
		public void buy(String sku) {
		}

	}

	public static class YearLongMaxHold {

		@DistributedLock(key = "#sku", maxHold = "400d")
		public void buy(String sku) {
		}

	}

	public static class DefaultMaxHold {

		@DistributedLock(key = "#sku")
		public void buy(String sku) {
		}

	}

	public static class TtlAboveDefaultMaxHold {

		@DistributedLock(key = "#sku", ttl = "2m")
		public void buy(String sku) {
		}

	}

	public static class ZeroTtl {

		@DistributedLock(key = "#sku", ttl = "0s")
		public void buy(String sku) {
		}

	}

	public static class FairRead {

		@DistributedLock(key = "#sku", fair = true, mode = dev.distlock.core.LockMode.READ)
		public void buy(String sku) {
		}

	}

	public static class NegativeWait {

		@DistributedLock(key = "#sku", waitTime = "-1s")
		public void buy(String sku) {
		}

	}

	public static class UnresolvablePlaceholder {

		@DistributedLock(key = "#sku", ttl = "${inventory.lock.ttl}")
		public void buy(String sku) {
		}

	}

	public static class ResolvablePlaceholder {

		@DistributedLock(key = "#sku", ttl = "${inventory.lock.ttl}")
		public void buy(String sku) {
		}

	}

	public static class PlaceholderWait {

		@DistributedLock(key = "#sku", waitTime = "${inventory.lock.wait}")
		public void buy(String sku) {
		}

	}

	public static class UnknownHandler {

		@DistributedLock(key = "#sku", failureHandler = "busyHandler")
		public void buy(String sku) {
		}

	}

	public static class NotAHandler {

		@DistributedLock(key = "#sku", failureHandler = "pricing")
		public void buy(String sku) {
		}

	}

	public static class HandlerAndSkip {

		@DistributedLock(key = "#sku", failureHandler = "busyHandler", onFailure = OnLockFailure.SKIP)
		public void buy(String sku) {
		}

	}

	public static class HandledBuy {

		@DistributedLock(key = "#sku", waitTime = "0", failureHandler = "busyHandler")
		public @Nullable String buy(String sku) {
			return "bought " + sku;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class HandlerDefinedAfterItsUser {

		@Bean
		HandledBuy handledBuy() {
			return new HandledBuy();
		}

		@Bean
		LockFailureHandler busyHandler() {
			return (failure) -> "busy";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BusyHandlerConfiguration {

		@Bean
		LockFailureHandler busyHandler() {
			return (failure) -> "busy";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LazyHandler {

		@Bean
		HandledBuy handledBuy() {
			return new HandledBuy();
		}

		@Bean
		@Lazy
		LockFailureHandler busyHandler() {
			return (failure) -> "busy";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LazyUserOfUnknownHandler {

		@Bean
		@Lazy
		UnknownHandler unknownHandler() {
			return new UnknownHandler();
		}

	}

	public static class PrivateMethod {

		public void entry(String sku) {
			buy(sku);
		}

		@DistributedLock(key = "#sku")
		private void buy(String sku) {
		}

	}

	public static class FinalMethod {

		@DistributedLock(key = "#sku")
		public final void buy(String sku) {
		}

	}

	public static class FutureReturn {

		@DistributedLock(key = "#sku")
		public CompletableFuture<String> buy(String sku) {
			return CompletableFuture.completedFuture(sku);
		}

	}

	public static class PlainFutureReturn {

		@DistributedLock(key = "#sku")
		public Future<String> buy(String sku) {
			return CompletableFuture.completedFuture(sku);
		}

	}

	public static class CompletionStageReturn {

		@DistributedLock(key = "#sku")
		public CompletionStage<String> buy(String sku) {
			return CompletableFuture.completedFuture(sku);
		}

	}

	public static class FutureSubclassReturn {

		@DistributedLock(key = "#sku")
		public Subclass<String> buy(String sku) {
			return new Subclass<>();
		}

		public static class Subclass<T> extends CompletableFuture<T> {

		}

	}

	public static class FutureWithUnknownParameter {

		@DistributedLock(key = "#skew")
		public CompletableFuture<String> buy(String sku) {
			return CompletableFuture.completedFuture(sku);
		}

	}

	public static class PublisherReturn {

		@DistributedLock(key = "#sku")
		public Publisher<String> buy(String sku) {
			return Mono.just(sku);
		}

	}

	public static class MonoReturn {

		@DistributedLock(key = "#sku")
		public Mono<String> buy(String sku) {
			return Mono.just(sku);
		}

	}

	public static class FluxReturn {

		@DistributedLock(key = "#sku")
		public Flux<String> buy(String sku) {
			return Flux.just(sku);
		}

	}

	/** What the Kotlin compiler makes of {@code suspend fun buy(sku: String): Any?}. */
	public static class SuspendFunction {

		@DistributedLock(key = "#sku")
		public Object buy(String sku, Continuation<Object> continuation) {
			return sku;
		}

	}

	public static class Valid {

		@DistributedLock(key = "'inventory:' + #sku + ':' + #p1 + @pricing.region()", ttl = "${inventory.lock.ttl}",
				waitTime = "PT0.5S")
		public void buy(String sku, int quantity) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PricingConfiguration {

		@Bean
		LockedBeans.Regions pricing() {
			return new LockedBeans.Regions();
		}

	}

}
