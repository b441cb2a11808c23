package dev.distlock.interceptor;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.convert.DurationStyle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * lock-core parses {@code @DistributedLock}'s durations without Spring Boot ({@link DurationText}); these tests hold it
 * to Boot's {@code DurationStyle.detectAndParse}, which it replaces, over a table of texts in both styles and near
 * misses of each: each text is either accepted by both as the same {@link Duration} or refused by both with an
 * {@link IllegalArgumentException}. If either parser changes, a row fails. They run here, where Boot is on the class
 * path; lock-core itself has no Boot.
 */
class DurationTextTests {

	@ParameterizedTest
	@ValueSource(strings = {
			// simple style: digits alone (milliseconds), every unit in both cases, signs, leading zeros, limits
			"0", "1", "500", "-500", "+500", "0010", "9223372036854775807", "-9223372036854775808", "5ns", "5NS",
			"100us", "100US", "500ms", "500MS", "500Ms", "10s", "10S", "2m", "2M", "1h", "1H", "1d", "1D", "-3s", "+3s",
			"0s", "-0ms", "9223372036854775807ns", "9223372036854775807ms", "9223372036854775807s", "106751991167300d",
			// ISO-8601
			"PT10S", "PT0.5S", "PT0,5S", "pt10s", "P1D", "P2DT3H4M", "-PT5M", "+PT5M", "PT-5M", "p1d", "PT0S", "PT1M30S",
			"PT0.000000001S", "P0D", "PT9223372036854775807S", "PT1.S",
			// refused by both: not a duration at all, blanks, white space, decimals, unknown or long units, words
			"", " ", "s", "ms", "10 s", " 10s", "10s ", "1.5s", "1,5s", "10sec", "10 seconds", "10x", "10mss", "10µs",
			"ten seconds", "a minute", "--5s", "+-5s", "5-s", "0x10", "1e3", "1e3ms", "${lock.ttl}", "#{1}", "null",
			// refused by both: out of the range of a long or of a Duration
			"9223372036854775808", "9223372036854775808ms", "-9223372036854775809", "106751991167301d",
			"9223372036854775807d", "9223372036854775807m",
			// refused by both: near misses of ISO-8601
			"P", "PT", "P1", "PTS", "PT10", "T10S", "PT10X", "P1W", "P1Y", "P1M", "PT10S\n", "\tPT10S", "pt", "PT1H1H",
			"P 1D", "PT9223372036854775808S", "P106751991167301D" })
	void acceptsAndRefusesExactlyWhatBootDoes(String text) {
		Duration boot = parseWithBoot(text);
		if (boot != null) {
			assertThat(DurationText.parse(text)).as("'%s', which Boot reads as %s", text, boot).isEqualTo(boot);
		}
		else {
			assertThatIllegalArgumentException().as("'%s', which Boot refuses", text)
				.isThrownBy(() -> DurationText.parse(text))
				.withMessageContaining("'" + text + "'");
		}
	}

	/** The table above must hold the formats the guide shows, so a drift of Boot cannot make the test vacuous. */
	@Test
	void theDocumentedFormatsAreRead() {
		assertThat(DurationText.parse("10s")).isEqualTo(Duration.ofSeconds(10));
		assertThat(DurationText.parse("500ms")).isEqualTo(Duration.ofMillis(500));
		assertThat(DurationText.parse("500")).isEqualTo(Duration.ofMillis(500));
		assertThat(DurationText.parse("2m")).isEqualTo(Duration.ofMinutes(2));
		assertThat(DurationText.parse("1h")).isEqualTo(Duration.ofHours(1));
		assertThat(DurationText.parse("1d")).isEqualTo(Duration.ofDays(1));
		assertThat(DurationText.parse("100us")).isEqualTo(Duration.ofNanos(100_000));
		assertThat(DurationText.parse("5ns")).isEqualTo(Duration.ofNanos(5));
		assertThat(DurationText.parse("PT10S")).isEqualTo(Duration.ofSeconds(10));
		assertThatIllegalArgumentException().isThrownBy(() -> DurationText.parse("ten seconds"));
	}

	@Test
	void aNullIsRefusedAsBootRefusesIt() {
		String text = null;
		assertThatIllegalArgumentException().isThrownBy(() -> DurationStyle.detectAndParse(text));
		assertThatIllegalArgumentException().isThrownBy(() -> DurationText.parse(text));
	}

	private static Duration parseWithBoot(String text) {
		try {
			return DurationStyle.detectAndParse(text);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

}
