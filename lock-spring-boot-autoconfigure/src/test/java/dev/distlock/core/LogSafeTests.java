package dev.distlock.core;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Caller-supplied text reaches a log line or an exception message as one line (issue 29). */
class LogSafeTests {

	@Test
	void textWithNothingToEscapeIsReturnedItself() {
		String key = "orders/eu:42 \\n é 🔒";
		assertThat(LogSafe.escape(key)).isSameAs(key);
		assertThat(LogSafe.escape("")).isSameAs("");
		assertThat(LogSafe.escape(null)).isNull();
	}

	@Test
	void lineBreaksAndTabsAreEscapedAsTwoCharacters() {
		assertThat(LogSafe.escape("a\r\nWARN forged")).isEqualTo("a\\r\\nWARN forged");
		assertThat(LogSafe.escape("\ta\n")).isEqualTo("\\ta\\n");
	}

	@ParameterizedTest
	@CsvSource({ "0, \\u0000", "7, \\u0007", "11, \\u000b", "12, \\u000c", "27, \\u001b", "31, \\u001f",
			"127, \\u007f", "133, \\u0085", "8232, \\u2028", "8233, \\u2029" })
	void otherControlCharactersAndUnicodeLineBreaksAreEscapedAsUnicodeEscapes(int character, String escaped) {
		assertThat(LogSafe.escape("k" + (char) character + "k")).isEqualTo("k" + escaped + "k");
	}

	@Test
	void charactersNextToTheEscapedRangesAreKept() {
		String text = " ~\u0080\u0084\u0086\u2027\u202a";
		assertThat(LogSafe.escape(text)).isSameAs(text);
	}

	@Test
	void escapingTwiceChangesNothingMore() {
		String once = LogSafe.escape("a\r\n\u0000\u2028b");
		assertThat(LogSafe.escape(once)).isSameAs(once);
	}

	@Test
	void anExceptionMessageAboutAKeyWithALineBreakIsOneLineAndTheKeyStaysRaw() {
		String key = "a\nWARN forged";
		LockLostException lost = new LockLostException(new LockLostEvent(key, "orders", "owner-1", 7,
				LockLostEvent.Detection.RENEWAL_FOUND_GONE, Instant.EPOCH));
		LockAcquisitionTimeoutException timeout = new LockAcquisitionTimeoutException(key, Duration.ofSeconds(1));

		assertThat(lost.getMessage()).doesNotContain("\n").startsWith("Lock 'a\\nWARN forged' (fencing token 7)");
		assertThat(lost.getKey()).isEqualTo(key);
		assertThat(timeout.getMessage()).doesNotContain("\n").startsWith("Could not acquire lock 'a\\nWARN forged'");
		assertThat(timeout.getKey()).isEqualTo(key);
	}

	@Test
	void aBlankKeyOfLineBreaksIsRejectedWithAOneLineMessage() {
		assertThatIllegalArgumentException().isThrownBy(() -> LockSettings.checkKey("\r\n", "'key'"))
			.withMessage("'key' must not be blank, but was '\\r\\n'");
	}

}
