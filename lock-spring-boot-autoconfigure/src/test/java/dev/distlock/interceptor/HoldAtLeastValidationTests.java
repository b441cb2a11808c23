package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.OnLockFailure;
import org.junit.jupiter.api.Test;

import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How {@link DistributedLock#holdAtLeast()} is parsed and checked: once, when the declaration is first seen (at the
 * application's start), with a message naming the method.
 */
class HoldAtLeastValidationTests {

	private final LockOperationSource source = new LockOperationSource(null, environment()::resolveRequiredPlaceholders,
			Duration.ofSeconds(30), Duration.ofSeconds(5));

	private static StandardEnvironment environment() {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.addFirst(new MapPropertySource("jobs", Map.of("jobs.report.hold", "55s", "jobs.report.off", "0")));
		return environment;
	}

	@Test
	void parsesTheDurationAndPlaceholders() {
		assertThat(operation(Jobs.class, "everyMinute").holdAtLeast()).isEqualTo(Duration.ofSeconds(50));
		assertThat(operation(Jobs.class, "fromProperty").holdAtLeast()).isEqualTo(Duration.ofSeconds(55));
	}

	@Test
	void emptyOrZeroMeansNone() {
		assertThat(operation(Jobs.class, "plain").holdAtLeast()).isNull();
		assertThat(operation(Jobs.class, "turnedOff").holdAtLeast()).isNull();
		// without holdAtLeast any wait is fine
		assertThat(operation(Jobs.class, "turnedOff").waitTime()).isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void negativeFailsNamingTheMethod() {
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> operation(Negative.class, "run"))
			.withMessage(Negative.class.getName() + ".run(): @DistributedLock attribute 'holdAtLeast' must not be "
					+ "negative, but was \"-1s\"");
	}

	@Test
	void longerThanAYearFailsNamingTheMethodAndTheValue() {
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> operation(YearLong.class, "run"))
			.withMessage(YearLong.class.getName() + ".run(): @DistributedLock attribute 'holdAtLeast' must be at most "
					+ "365 days, but was \"366d\"");
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> operation(YearLong.class, "ttl"))
			.withMessage(YearLong.class.getName() + ".ttl(): @DistributedLock attribute 'ttl' must be at most "
					+ "365 days, but was \"366d\"");
	}

	@Test
	void unparsableFailsNamingTheMethod() {
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> operation(Unparsable.class, "run"))
			.withMessageContaining(Unparsable.class.getName() + ".run()")
			.withMessageContaining("'holdAtLeast' is \"a minute\", which is not a duration");
	}

	@Test
	void aWaitFailsNamingTheMethodAndTheWait() {
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> operation(Waits.class, "run"))
			.withMessageContaining(Waits.class.getName() + ".run()")
			.withMessageContaining("'holdAtLeast' (10000ms) needs waitTime = \"0\", but the wait is 2000ms:");
		// the default wait counts, and the message says where it came from
		assertThatExceptionOfType(InvalidLockDeclarationException.class)
			.isThrownBy(() -> operation(WaitsByDefault.class, "run"))
			.withMessageContaining("but the wait is 5000ms (distlock.default-wait-time, as the declaration sets none)");
	}

	@Test
	void longerThanTheTtlIsFine() {
		// the window is a lease of its own, not the lock's: any holdAtLeast works with any ttl
		LockOperation operation = operation(Jobs.class, "longerThanTtl");
		assertThat(operation.holdAtLeast()).isGreaterThan(operation.ttl());
	}

	private LockOperation operation(Class<?> type, String method) {
		Method found = ReflectionUtils.findMethod(type, method);
		assertThat(found).isNotNull();
		LockOperation operation = this.source.getOperation(found, type);
		assertThat(operation).isNotNull();
		return operation;
	}

	static class Jobs {

		@DistributedLock(key = "'report'", waitTime = "0", onFailure = OnLockFailure.SKIP, holdAtLeast = "50s")
		public void everyMinute() {
		}

		@DistributedLock(key = "'report'", waitTime = "0", holdAtLeast = "${jobs.report.hold}")
		public void fromProperty() {
		}

		@DistributedLock(key = "'report'")
		public void plain() {
		}

		@DistributedLock(key = "'report'", holdAtLeast = "${jobs.report.off}")
		public void turnedOff() {
		}

		@DistributedLock(key = "'report'", ttl = "5s", waitTime = "0", holdAtLeast = "10m")
		public void longerThanTtl() {
		}

	}

	static class Negative {

		@DistributedLock(key = "'report'", waitTime = "0", holdAtLeast = "-1s")
		public void run() {
		}

	}

	static class YearLong {

		@DistributedLock(key = "'report'", waitTime = "0", holdAtLeast = "366d")
		public void run() {
		}

		@DistributedLock(key = "'report'", ttl = "366d")
		public void ttl() {
		}

	}

	static class Unparsable {

		@DistributedLock(key = "'report'", waitTime = "0", holdAtLeast = "a minute")
		public void run() {
		}

	}

	static class Waits {

		@DistributedLock(key = "'report'", waitTime = "2s", holdAtLeast = "10s")
		public void run() {
		}

	}

	static class WaitsByDefault {

		@DistributedLock(key = "'report'", holdAtLeast = "10s")
		public void run() {
		}

	}

}
