package dev.distlock.autoconfigure;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/** A start that fails on a bad declaration reports the method, the attribute, the problem and what to do. */
@ExtendWith(OutputCaptureExtension.class)
class InvalidLockDeclarationFailureAnalyzerTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
		.withBean(InMemoryLockService.class);

	@Test
	void aBadKeyNamesTheMethodTheAttributeAndTheProblem() {
		FailureAnalysis analysis = analyzeStartOf(TypoInKey.class);
		assertThat(analysis.getDescription()).isEqualTo("""
				A @DistributedLock declaration cannot work:

				    Method: %s.buy(String, int)
				    Attribute: key
				    Problem: key expression "'inventory:' + #skew" refers to #skew, which is not a parameter of the \
				method (parameters: #sku, #quantity)\
				""".formatted(TypoInKey.class.getName()));
		assertThat(analysis.getAction()).startsWith("Correct the key expression of " + TypoInKey.class.getName()
				+ ".buy(String, int).").contains("#p0");
	}

	@Test
	void anOutOfRangeDurationNamesItsAttribute() {
		FailureAnalysis analysis = analyzeStartOf(ZeroTtl.class);
		assertThat(analysis.getDescription()).contains("    Attribute: ttl\n")
			.contains("    Problem: @DistributedLock attribute 'ttl' must be at least 1ms, but was \"0s\"");
		assertThat(analysis.getAction()).startsWith("Give 'ttl' of " + ZeroTtl.class.getName() + ".buy(String)")
			.contains("at least 1ms");
	}

	@Test
	void permitsOutOfRangeNameTheAttributeAndTheRange() {
		FailureAnalysis analysis = analyzeStartOf(TooManyPermits.class);
		assertThat(analysis.getDescription()).contains("    Attribute: permits\n")
			.contains("    Problem: @DistributedLock attribute 'permits' must be between 1 and 10000 (or 0 for a lock, "
					+ "not a semaphore), but was 10001");
		assertThat(analysis.getAction())
			.startsWith("Give 'permits' of " + TooManyPermits.class.getName() + ".call() the number of callers")
			.contains("from 1 to 10000");
	}

	@Test
	void holdAtLeastWithAWaitSaysToSetTheWaitToZero() {
		FailureAnalysis analysis = analyzeStartOf(HoldAtLeastWithWait.class);
		assertThat(analysis.getDescription()).contains("    Attribute: holdAtLeast\n")
			.contains("needs waitTime = \"0\", but the wait is 2000ms");
		assertThat(analysis.getAction())
			.startsWith("Give 'holdAtLeast' of " + HoldAtLeastWithWait.class.getName() + ".report()")
			.contains("waitTime = \"0\"")
			.contains("onFailure = SKIP");
	}

	@Test
	void aMaxHoldShorterThanTheTtlSaysWhatItMustBe() {
		FailureAnalysis analysis = analyzeStartOf(ShortMaxHold.class);
		assertThat(analysis.getDescription()).contains("    Attribute: maxHold\n")
			.contains("    Problem: @DistributedLock attribute 'maxHold' must be at least the lease time (PT1M), but was "
					+ "\"30s\"");
		assertThat(analysis.getAction()).startsWith("Give 'maxHold' of " + ShortMaxHold.class.getName() + ".buy(String)")
			.contains("at least its lease time");
	}

	@Test
	void aProblemOfTheMethodItselfHasNoAttribute() {
		FailureAnalysis analysis = analyzeStartOf(Asynchronous.class);
		assertThat(analysis.getDescription()).contains("    Method: " + Asynchronous.class.getName() + ".buy(String)\n")
			.doesNotContain("Attribute:")
			.contains("returns Future")
			.contains("Declare the return type CompletableFuture or CompletionStage");
		assertThat(analysis.getAction()).contains("synchronous, CompletableFuture or CompletionStage return type")
			.contains("LockService.execute");
	}

	@Test
	void aMissingFailureHandlerBean() {
		FailureAnalysis analysis = analyzeStartOf(MissingHandler.class);
		assertThat(analysis.getDescription()).contains("    Attribute: failureHandler\n")
			.contains("names bean 'noSuchHandler', which does not exist");
		assertThat(analysis.getAction()).contains("LockFailureHandler");
	}

	@Test
	void isRegisteredAndReportsTheFailedStart(CapturedOutput output) {
		// registered in META-INF/spring.factories: Boot's own start finds it
		assertThatException().isThrownBy(() -> new SpringApplicationBuilder(FailingApplication.class)
			.web(WebApplicationType.NONE)
			.run());
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("A @DistributedLock declaration cannot work:")
			.contains("    Method: " + TypoInKey.class.getName() + ".buy(String, int)")
			.contains("Action:")
			.contains("Correct the key expression of");
	}

	private FailureAnalysis analyzeStartOf(Class<?> beanClass) {
		FailureAnalysis[] analysis = new FailureAnalysis[1];
		this.runner.withBean(beanClass).run(context -> {
			assertThat(context).hasFailed();
			analysis[0] = new InvalidLockDeclarationFailureAnalyzer().analyze(context.getStartupFailure());
		});
		assertThat(analysis[0]).isNotNull();
		assertThat(analysis[0].getCause()).isInstanceOf(InvalidLockDeclarationException.class);
		return analysis[0];
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(DistributedLockAutoConfiguration.class)
	static class FailingApplication {

		@Bean
		InMemoryLockService lockService() {
			return new InMemoryLockService();
		}

		@Bean
		TypoInKey typoInKey() {
			return new TypoInKey();
		}

	}

	static class TypoInKey {

		@DistributedLock(key = "'inventory:' + #skew")
		public void buy(String sku, int quantity) {
		}

	}

	static class TooManyPermits {

		@DistributedLock(key = "'partner-api'", permits = 10_001)
		public void call() {
		}

	}

	static class HoldAtLeastWithWait {

		@DistributedLock(key = "'report'", waitTime = "2s", holdAtLeast = "55s")
		public void report() {
		}

	}

	static class ShortMaxHold {

		@DistributedLock(key = "#sku", ttl = "1m", maxHold = "30s")
		public void buy(String sku) {
		}

	}

	static class ZeroTtl {

		@DistributedLock(key = "#sku", ttl = "0s")
		public void buy(String sku) {
		}

	}

	static class Asynchronous {

		@DistributedLock(key = "#sku")
		public Future<Void> buy(String sku) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class MissingHandler {

		@DistributedLock(key = "#sku", failureHandler = "noSuchHandler")
		public void buy(String sku) {
		}

	}

}
