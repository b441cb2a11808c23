package dev.distlock.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Each rule once, each message starting with what the caller said it checks: an argument or a property. */
class LockSettingsTests {

	@Test
	void validValuesPassThrough() {
		assertThat(LockSettings.checkKey("k", "'key'")).isEqualTo("k");
		assertThat(LockSettings.checkName(null, "'name'")).isNull();
		assertThat(LockSettings.checkName("orders", "'name'")).isEqualTo("orders");
		assertThat(LockSettings.checkKeyPrefix("orders", "'keyPrefix'")).isEqualTo("orders");
		assertThat(LockSettings.checkTtl(Duration.ofMillis(1), "'ttl'")).isEqualTo(Duration.ofMillis(1));
		assertThat(LockSettings.checkWaitTime(Duration.ZERO, "'waitTime'")).isZero();
		assertThat(LockSettings.checkRenewalRatio(0.5, "'renewalRatio'")).isEqualTo(0.5);
		assertThat(LockSettings.checkIdleUnsubscribe(Duration.ZERO, "'idleUnsubscribe'")).isZero();
		assertThat(LockSettings.checkLocalHandOvers(0, "'localHandOvers'")).isZero();
	}

	@Test
	void invalidValuesAreRejectedNamingTheSubjectTheRuleAndTheValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkKey(" ", "'key'"))
			.withMessage("'key' must not be blank, but was ' '");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkKey(null, "'key'"))
			.withMessage("'key' must not be blank, but was null");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkName("", "'name'"))
			.withMessage("'name' must not be blank, but was ''");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkKeyPrefix("a{b}", "distlock.key-prefix"))
			.withMessage("distlock.key-prefix must be non-blank and without braces, but was 'a{b}'");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkKeyPrefix(" ", "'keyPrefix'"))
			.withMessageStartingWith("'keyPrefix' must be non-blank");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkTtl(Duration.ofNanos(999_999), "'ttl'"))
			.withMessage("'ttl' must be at least 1ms, but was PT0.000999999S");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkTtl(null, "'ttl'"))
			.withMessage("'ttl' must be at least 1ms, but was null");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkWaitTime(Duration.ofMillis(-1), "'waitTime'"))
			.withMessage("'waitTime' must not be negative, but was PT-0.001S");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkRenewalRatio(1, "distlock.renewal-ratio"))
			.withMessage("distlock.renewal-ratio must be between 0 and 1 (exclusive), but was 1.0");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkRenewalRatio(Double.NaN, "'renewalRatio'"))
			.withMessageStartingWith("'renewalRatio' must be between 0 and 1");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockSettings.checkIdleUnsubscribe(Duration.ofSeconds(-1), "'idleUnsubscribe'"))
			.withMessage("'idleUnsubscribe' must not be negative, but was PT-1S");
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkLocalHandOvers(-1, "'localHandOvers'"))
			.withMessage("'localHandOvers' must not be negative, but was -1");
	}

	@Test
	void aLeaseTimeLongerThanAYearIsRejected() {
		// beyond it PEXPIRE may overflow (or Lua turn the number into one Redis refuses) after a script wrote the hold
		Duration year = Duration.ofDays(365);
		assertThat(LockSettings.checkTtl(year, "'ttl'")).isEqualTo(year);
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkTtl(year.plusMillis(1), "'ttl'"))
			.withMessage("'ttl' must be at most 365 days, but was PT8760H0.001S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockSettings.checkTtl(Duration.ofSeconds(Long.MAX_VALUE), "distlock.default-ttl"))
			.withMessageStartingWith("distlock.default-ttl must be at most 365 days, but was PT");
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of("k", Duration.ofDays(366), Duration.ZERO))
			.withMessage("'ttl' of lock 'k' must be at most 365 days, but was PT8784H");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockSettings.checkFairEntryTtl(Duration.ofDays(366), "distlock.fair-entry-ttl"))
			.withMessage("distlock.fair-entry-ttl must be at most 365 days, but was PT8784H");
	}

	@Test
	void aLockRequestNamesTheArgumentAndTheKey() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of(" ", Duration.ofSeconds(1), Duration.ZERO))
			.withMessage("'key' must not be blank, but was ' '");
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of("k", Duration.ZERO, Duration.ZERO))
			.withMessage("'ttl' of lock 'k' must be at least 1ms, but was PT0S");
		assertThatIllegalArgumentException().isThrownBy(() -> LockRequest.of("k", Duration.ofSeconds(1), Duration.ofSeconds(-1)))
			.withMessage("'waitTime' of lock 'k' must not be negative, but was PT-1S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockRequest.of("k", Duration.ofSeconds(1), Duration.ZERO).withName(" "))
			.withMessage("'name' of lock 'k' must not be blank, but was ' '");
	}

}
