package dev.distlock.interceptor;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.util.Assert;

/**
 * Parses the duration attributes of {@code @DistributedLock} ({@code ttl}, {@code waitTime}, {@code holdAtLeast}),
 * so that {@code lock-core} needs no Spring Boot. It accepts what Boot's {@code DurationStyle.detectAndParse} accepts,
 * and only that, so an annotation means the same with or without Boot, and a {@code ${...}} placeholder resolves to
 * what {@code @ConfigurationProperties} would bind:
 * <ul>
 * <li>the simple style: an optional sign, digits and a unit of {@code ns}, {@code us}, {@code ms}, {@code s},
 * {@code m}, {@code h} or {@code d} in any case ({@code 10s}, {@code 500MS}, {@code -2m}); digits alone are
 * milliseconds;
 * <li>ISO-8601, as {@link Duration#parse(CharSequence)} reads it ({@code PT10S}, {@code -P1DT2H}, {@code pt0.5s}).
 * </ul>
 * {@code DurationTextTests} (in {@code lock-spring-boot-autoconfigure}, where Boot is on the class path) compares the
 * two over a table of valid and invalid inputs, so a change of either shows.
 */
final class DurationText {

	/** The simple style: a signed integer and a unit of at most two letters (none: milliseconds). */
	private static final Pattern SIMPLE = Pattern.compile("([+-]?[0-9]+)([a-zA-Z]{0,2})");

	/** What is handed to {@link Duration#parse}: anything that starts with {@code P}, after an optional sign. */
	private static final Pattern ISO_8601 = Pattern.compile("[+-]?[pP].*");

	private static final Map<String, ChronoUnit> UNITS = Map.of("ns", ChronoUnit.NANOS, "us", ChronoUnit.MICROS,
			"ms", ChronoUnit.MILLIS, "s", ChronoUnit.SECONDS, "m", ChronoUnit.MINUTES, "h", ChronoUnit.HOURS, "d",
			ChronoUnit.DAYS);

	private DurationText() {
	}

	/**
	 * The duration {@code text} writes.
	 * @param text the text, already trimmed
	 * @return the duration
	 * @throws IllegalArgumentException if the text is in neither style, names an unknown unit, or does not fit a
	 * {@link Duration}
	 */
	static Duration parse(String text) {
		Assert.notNull(text, "'text' must not be null");
		Matcher simple = SIMPLE.matcher(text);
		if (simple.matches()) {
			return simple(text, simple.group(1), simple.group(2));
		}
		if (ISO_8601.matcher(text).matches()) {
			try {
				return Duration.parse(text);
			}
			catch (DateTimeParseException ex) {
				throw new IllegalArgumentException("'" + text + "' is not a valid ISO-8601 duration", ex);
			}
		}
		throw new IllegalArgumentException("'" + text + "' is not a valid duration");
	}

	private static Duration simple(String text, String amount, String suffix) {
		ChronoUnit unit = suffix.isEmpty() ? ChronoUnit.MILLIS : UNITS.get(suffix.toLowerCase(Locale.ROOT));
		if (unit == null) {
			throw new IllegalArgumentException("'" + text + "' is not a valid simple duration: unknown unit '" + suffix
					+ "' (ns, us, ms, s, m, h or d)");
		}
		try {
			return Duration.of(Long.parseLong(amount), unit);
		}
		catch (NumberFormatException | ArithmeticException ex) {
			throw new IllegalArgumentException("'" + text + "' is not a valid simple duration: out of range", ex);
		}
	}

}
