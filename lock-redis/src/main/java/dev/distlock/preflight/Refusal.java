package dev.distlock.preflight;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * What an ACL refused: a command, a key or a channel, with its name where Redis said it (Redis 7.0 names refused
 * commands, but not refused keys or channels, nor commands refused inside a script).
 *
 * @param target what kind of thing was refused
 * @param name the refused command (lower case), key or channel, or {@code null} when the error did not say
 * @since 0.1.0
 */
public record Refusal(Target target, @Nullable String name) {

	/**
	 * A refusal.
	 * @param target what kind of thing was refused
	 * @param name the refused command, key or channel, or {@code null}
	 */
	public Refusal {
		Assert.notNull(target, "'target' must not be null");
	}

	/**
	 * The ACL rule that grants what was refused to a lock service whose keys and channels start with
	 * {@code keyPrefix}: {@code +<command>}, {@code ~<prefix>:*} or {@code &<prefix>:*}; {@code null} for a command
	 * whose name is unknown.
	 * @param keyPrefix the lock service's key prefix
	 * @return the rule, or {@code null}
	 */
	public @Nullable String grant(String keyPrefix) {
		return switch (this.target) {
			case COMMAND -> (this.name != null) ? "+" + this.name : null;
			case KEY -> "~" + keyPrefix + ":*";
			case CHANNEL -> "&" + keyPrefix + ":*";
		};
	}

	/** What kind of thing an ACL refused. */
	public enum Target {

		/** A command (ACL rule {@code +<command>}). */
		COMMAND,

		/** A key (ACL rule {@code ~<pattern>}). */
		KEY,

		/** A pub/sub channel (ACL rule {@code &<pattern>}). */
		CHANNEL

	}

}
