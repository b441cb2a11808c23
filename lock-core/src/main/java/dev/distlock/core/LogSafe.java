package dev.distlock.core;

import org.jspecify.annotations.Nullable;

/**
 * Makes caller-supplied text (lock keys, lock names, caller names) safe to put in a log line or an exception message:
 * a key such as {@code "a\r\nWARN forged"} must not start a line of its own in the log.
 * <p>
 * Escapes the ASCII control characters (U+0000 to U+001F and U+007F) and the Unicode line breaks U+0085 (next line),
 * U+2028 (line separator) and U+2029 (paragraph separator): {@code \r}, {@code \n} and {@code \t} as those two
 * characters, every other one as a Java Unicode escape such as {@code \u001b}. Everything else, backslashes included,
 * is kept as it is, so an ordinary key reads as before (a key that itself contains the two characters {@code \n} reads
 * the same as one with a line break; the log stays one line a record either way).
 * <p>
 * Used by this library's log statements and exception messages; the keys themselves (in Redis, in
 * {@link LockException#getKey()}, in events and in the endpoint's JSON) are never changed. Not meant as API for
 * applications.
 *
 * @since 0.1.0
 */
public final class LogSafe {

	private LogSafe() {
	}

	/**
	 * The text with its control characters and line breaks escaped.
	 * @param text the text; {@code null} gives {@code null} (which string concatenation writes as {@code "null"})
	 * @return {@code text} itself when it has nothing to escape (no copy on the common path), else the escaped text
	 */
	public static @Nullable String escape(@Nullable String text) {
		if (text == null) {
			return null;
		}
		int length = text.length();
		int first = 0;
		while (first < length && !needsEscape(text.charAt(first))) {
			first++;
		}
		if (first == length) {
			return text;
		}
		StringBuilder escaped = new StringBuilder(length + 16).append(text, 0, first);
		for (int i = first; i < length; i++) {
			char c = text.charAt(i);
			if (!needsEscape(c)) {
				escaped.append(c);
			}
			else if (c == '\r') {
				escaped.append("\\r");
			}
			else if (c == '\n') {
				escaped.append("\\n");
			}
			else if (c == '\t') {
				escaped.append("\\t");
			}
			else {
				escaped.append("\\u").append(String.format("%04x", (int) c));
			}
		}
		return escaped.toString();
	}

	private static boolean needsEscape(char c) {
		return c < 0x20 || c == 0x7f || c == '\u0085' || c == '\u2028' || c == '\u2029';
	}

}
