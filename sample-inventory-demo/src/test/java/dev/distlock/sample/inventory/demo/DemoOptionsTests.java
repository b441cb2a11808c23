package dev.distlock.sample.inventory.demo;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class DemoOptionsTests {

	@Test
	void defaultsAreTheFullSizeOfTheIssue() {
		DemoOptions options = DemoOptions.parse();

		assertThat(options.instances()).isEqualTo(2);
		assertThat(options.stock()).isEqualTo(500);
		assertThat(options.attempts()).isEqualTo(2000);
		assertThat(options.clients()).isEqualTo(64);
		assertThat(options.processingDelay()).isEqualTo(Duration.ofMillis(2));
		assertThat(options.redis()).isNull();
		assertThat(options.expectedSold()).isEqualTo(500);
		assertThat(options.redlock()).isFalse();
	}

	@Test
	void redlockAddsItsRowAtAnySize() {
		assertThat(DemoOptions.parse("--redlock").redlock()).isTrue();
		DemoOptions quick = DemoOptions.parse("--quick", "--redlock");
		assertThat(quick.redlock()).isTrue();
		assertThat(quick.stock()).isEqualTo(100);
		assertThat(DemoOptions.USAGE).contains("--redlock", "5 more private redis-servers");
	}

	@Test
	void quickIsSmallerAndExplicitOptionsWinWhereverTheyStand() {
		DemoOptions options = DemoOptions.parse("--attempts", "50", "--quick", "--instances=3");

		assertThat(options.quick()).isTrue();
		assertThat(options.stock()).isEqualTo(100);
		assertThat(options.attempts()).isEqualTo(50);
		assertThat(options.clients()).isEqualTo(16);
		assertThat(options.instances()).isEqualTo(3);
		assertThat(options.expectedSold()).isEqualTo(50);
	}

	@Test
	void parsesRedisDelayAndTimeouts() {
		DemoOptions options = DemoOptions.parse("--redis", "10.0.0.5:6380", "--delay=0", "--start-timeout", "2m");

		assertThat(options.redis()).isEqualTo(new DemoOptions.RedisAddress("10.0.0.5", 6380));
		assertThat(options.processingDelay()).isZero();
		assertThat(options.startTimeout()).isEqualTo(Duration.ofMinutes(2));
		assertThat(DemoOptions.parse("--redis", "[::1]:7000").redis().host()).isEqualTo("::1");
	}

	/** The issue asks for at least two instances: with one, the JVM-local lock never oversells and there is no story. */
	@Test
	void fewerThanTwoInstancesAreRejectedNamingTheOption() {
		String why = ": within one instance a JVM-local lock is enough, the demo shows what happens across several";
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--instances", "1"))
			.withMessage("Option --instances needs a whole number of at least 2, but was '1'" + why);
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--quick", "--instances=0"))
			.withMessage("Option --instances needs a whole number of at least 2, but was '0'" + why);
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--instances", "two"))
			.withMessageStartingWith("Option --instances needs a whole number of at least 2, but was 'two'");
		assertThat(DemoOptions.parse("--instances", "2").instances()).isEqualTo(2);
	}

	@Test
	void mistakesNameTheOption() {
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--stok", "5"))
			.withMessage("Unknown option '--stok'; see --help");
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--clients"))
			.withMessage("Option --clients needs a value");
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--stock", "0"))
			.withMessage("Option --stock needs a whole number of at least 1, but was '0'");
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--redis", "localhost"))
			.withMessage("Option --redis needs host:port, but was 'localhost'");
		assertThatIllegalArgumentException().isThrownBy(() -> DemoOptions.parse("--delay", "soon"))
			.withMessage("Option --delay needs a duration like 2ms or 1s, but was 'soon'");
	}

}
