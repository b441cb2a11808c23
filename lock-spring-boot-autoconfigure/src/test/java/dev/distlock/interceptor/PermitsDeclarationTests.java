package dev.distlock.interceptor;

import java.time.Duration;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.InMemoryLockService;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How {@code @DistributedLock(permits = N)} is parsed (issue 30): into a {@link LockMode#PERMITS} operation whose
 * requests carry N, in proxy mode and by the validator of AspectJ mode alike; and every declaration that cannot work
 * (a number out of range, permits with {@code fair}, another mode or {@code holdAtLeast}, {@code mode = PERMITS}
 * without a number) fails the start naming the method and the attribute.
 */
class PermitsDeclarationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withBean(InMemoryLockService.class);

	private static LockOperationSource source() {
		return new LockOperationSource(null, null, Duration.ofSeconds(30), Duration.ofSeconds(5));
	}

	@Test
	void permitsMakeAPermitsOperationWhoseRequestsCarryTheNumber() throws Exception {
		LockOperation operation = source().getOperation(PartnerApi.class.getMethod("call"), PartnerApi.class);
		assertThat(operation).isNotNull();
		assertThat(operation.mode()).isEqualTo(LockMode.PERMITS);
		assertThat(operation.permits()).isEqualTo(3);
		LockRequest request = operation.request("partner-api", operation.waitTime());
		assertThat(request.mode()).isEqualTo(LockMode.PERMITS);
		assertThat(request.permits()).isEqualTo(3);
		assertThat(request.ttl()).isEqualTo(Duration.ofSeconds(30));
		assertThat(request.waitTime()).isEqualTo(Duration.ofSeconds(10));
	}

	@Test
	void aLockHasOnePermitAndAModeOfPermitsWithANumberIsTheSame() throws Exception {
		LockOperationSource source = source();
		LockOperation lock = source.getOperation(PartnerApi.class.getMethod("lock"), PartnerApi.class);
		assertThat(lock.mode()).isEqualTo(LockMode.EXCLUSIVE);
		assertThat(lock.permits()).isEqualTo(1);
		LockOperation both = source.getOperation(PartnerApi.class.getMethod("modeAndPermits"), PartnerApi.class);
		assertThat(both.mode()).isEqualTo(LockMode.PERMITS);
		assertThat(both.permits()).isEqualTo(2);
	}

	@Test
	void theValidatorOfAspectJModeParsesPermitsWithTheSameSource() {
		LockOperationSource source = source();
		LockDeclarationValidator validator = new LockDeclarationValidator(source);
		validator.postProcessAfterInitialization(new PartnerApi(), "partnerApi");
		assertThat(source.operations()).filteredOn((operation) -> operation.method().getName().equals("call"))
			.singleElement()
			.satisfies((operation) -> assertThat(operation.permits()).isEqualTo(3));
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> validator.postProcessAfterInitialization(new NegativePermits(), "negative"))
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("permits"))
			.withMessageContaining(NegativePermits.class.getName() + ".call()");
	}

	@Test
	void aContextWithPermitsStartsAndProxiesTheBean() {
		this.runner.withBean(PartnerApi.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void negativePermits() {
		assertStartFails(NegativePermits.class, "@DistributedLock attribute 'permits' must be between 1 and 10000 (or "
				+ "0 for a lock, not a semaphore), but was -1");
	}

	@Test
	void morePermitsThanTheMost() {
		assertStartFails(TooManyPermits.class, "@DistributedLock attribute 'permits' must be between 1 and 10000 (or "
				+ "0 for a lock, not a semaphore), but was 10001");
	}

	@Test
	void permitsAndFair() {
		assertStartFails(FairPermits.class, "@DistributedLock attribute 'permits' (3) cannot be combined with 'fair' = "
				+ "true: fair semaphores are not supported; choose one");
	}

	@Test
	void permitsAndAReadOrWriteOrFairMode() {
		assertStartFails(ReadPermits.class, "@DistributedLock attribute 'permits' (3) cannot be combined with 'mode' = "
				+ "READ: permits are a lock kind of their own, never a fair, read or write lock; choose one");
		assertStartFails(WritePermits.class, "'mode' = WRITE");
		assertStartFails(FairModePermits.class, "'mode' = FAIR");
	}

	@Test
	void aModeOfPermitsWithoutANumber() {
		assertStartFails(ModeWithoutPermits.class, "@DistributedLock sets 'mode' = PERMITS but not 'permits': set "
				+ "permits = N (1 to 10000), how many callers hold the key at once, which makes the mode PERMITS by "
				+ "itself");
	}

	@Test
	void permitsAndHoldAtLeast() {
		assertStartFails(HoldAtLeastPermits.class, "@DistributedLock attribute 'permits' (3) cannot be combined with "
				+ "'holdAtLeast': its window spaces the runs of the key, one per window, so the other permits would "
				+ "never be used; choose one (permits bound the concurrent callers, holdAtLeast the rate of runs)");
	}

	/** The start fails on the method {@code call()} of {@code beanClass}, attribute {@code permits}. */
	private void assertStartFails(Class<?> beanClass, String problem) {
		this.runner.withBean(beanClass).run((context) -> {
			assertThat(context).hasFailed();
			Throwable cause = context.getStartupFailure();
			while (!(cause instanceof InvalidLockDeclarationException) && cause.getCause() != null) {
				cause = cause.getCause();
			}
			assertThat(cause).isInstanceOf(InvalidLockDeclarationException.class);
			InvalidLockDeclarationException invalid = (InvalidLockDeclarationException) cause;
			assertThat(invalid.getMethod()).isEqualTo(beanClass.getName() + ".call()");
			assertThat(invalid.getAttribute()).isEqualTo("permits");
			assertThat(invalid.getProblem()).contains(problem);
		});
	}

	public static class PartnerApi {

		@DistributedLock(key = "'partner-api'", permits = 3, ttl = "30s", waitTime = "10s")
		public void call() {
		}

		@DistributedLock(key = "'partner-api'")
		public void lock() {
		}

		@DistributedLock(key = "'partner-api'", permits = 2, mode = LockMode.PERMITS)
		public void modeAndPermits() {
		}

	}

	public static class NegativePermits {

		@DistributedLock(key = "'partner-api'", permits = -1)
		public void call() {
		}

	}

	public static class TooManyPermits {

		@DistributedLock(key = "'partner-api'", permits = 10_001)
		public void call() {
		}

	}

	public static class FairPermits {

		@DistributedLock(key = "'partner-api'", permits = 3, fair = true)
		public void call() {
		}

	}

	public static class ReadPermits {

		@DistributedLock(key = "'partner-api'", permits = 3, mode = LockMode.READ)
		public void call() {
		}

	}

	public static class WritePermits {

		@DistributedLock(key = "'partner-api'", permits = 3, mode = LockMode.WRITE)
		public void call() {
		}

	}

	public static class FairModePermits {

		@DistributedLock(key = "'partner-api'", permits = 3, mode = LockMode.FAIR)
		public void call() {
		}

	}

	public static class ModeWithoutPermits {

		@DistributedLock(key = "'partner-api'", mode = LockMode.PERMITS)
		public void call() {
		}

	}

	public static class HoldAtLeastPermits {

		@DistributedLock(key = "'partner-api'", permits = 3, waitTime = "0", holdAtLeast = "55s")
		public void call() {
		}

	}

}
