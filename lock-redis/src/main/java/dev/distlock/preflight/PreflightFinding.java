package dev.distlock.preflight;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * One thing the preflight found Redis to refuse.
 *
 * @param check what was tried, such as {@code EVALSHA} or {@code HINCRBY inside the lock scripts}
 * @param error the classified failure
 * @param grant the ACL rule that would allow it ({@code +evalsha}, {@code &lock:*}), or {@code null} when it is not
 * a permission
 * @since 0.1.0
 */
public record PreflightFinding(String check, RedisError error, @Nullable String grant) {

	/**
	 * A finding with a check and an error.
	 * @param check what was tried
	 * @param error the classified failure
	 * @param grant the ACL rule that would allow it, or {@code null}
	 */
	public PreflightFinding {
		Assert.hasText(check, "'check' must not be blank");
		Assert.notNull(error, "'error' must not be null");
	}

}
