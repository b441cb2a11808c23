package dev.distlock.preflight;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * What the startup preflight found, and the text an operator needs: what was refused, and what to change.
 *
 * @param outcome whether Redis allowed everything, refused something, or could not be asked
 * @param server the server and user checked, as the texts name them: {@code Redis at 127.0.0.1:6379 as user 'app'}
 * @param user the ACL user, {@code default} when the application names none
 * @param keyPrefix the lock key prefix, whose keys and channels were checked
 * @param findings what Redis refused, or the failure that kept it from being asked; empty when it passed
 * @since 0.1.0
 */
public record PreflightReport(Outcome outcome, String server, String user, String keyPrefix,
		List<PreflightFinding> findings) {

	/**
	 * A report; the findings are copied.
	 * @param outcome whether the check passed, failed or could not run
	 * @param server the server and user checked
	 * @param user the ACL user
	 * @param keyPrefix the lock key prefix
	 * @param findings what Redis refused
	 */
	public PreflightReport {
		Assert.notNull(outcome, "'outcome' must not be null");
		findings = List.copyOf(findings);
	}

	/**
	 * Whether Redis allowed everything the locks need.
	 * @return true when it passed
	 */
	public boolean passed() {
		return this.outcome == Outcome.PASSED;
	}

	/**
	 * The ACL rules that would allow what was refused, each once, in the order found.
	 * @return the rules to grant, without repeats
	 */
	public Set<String> grants() {
		Set<String> grants = new LinkedHashSet<>();
		for (PreflightFinding finding : this.findings) {
			if (finding.grant() != null) {
				grants.add(finding.grant());
			}
		}
		return grants;
	}

	/**
	 * The kind of failure that decides the texts, the first in {@link RedisErrorKind}'s order: credentials and TLS
	 * failures end the check at once, so they come alone.
	 * @return the decisive kind, or {@code null} when nothing failed
	 */
	public @Nullable RedisErrorKind decisiveKind() {
		RedisErrorKind decisive = null;
		for (PreflightFinding finding : this.findings) {
			RedisErrorKind kind = finding.error().kind();
			if (decisive == null || kind.ordinal() < decisive.ordinal()) {
				decisive = kind;
			}
		}
		return decisive;
	}

	/**
	 * What was refused (or why nothing could be checked), one finding a line.
	 * @return the description, for the log or the failure report
	 */
	public String description() {
		StringBuilder text = new StringBuilder();
		switch (this.outcome) {
			case PASSED -> text.append(this.server).append(" allows everything the locks need (key prefix '")
				.append(this.keyPrefix).append("').");
			case UNAVAILABLE -> text.append("Could not check what ").append(this.server)
				.append(" allows the locks: Redis did not answer at startup.");
			case FAILED -> {
				RedisErrorKind kind = decisiveKind();
				if (kind == RedisErrorKind.AUTHENTICATION) {
					text.append(this.server).append(" refused the application's credentials.");
				}
				else if (kind == RedisErrorKind.TLS) {
					text.append("The TLS handshake with ").append(this.server).append(" failed.");
				}
				else if (kind == RedisErrorKind.PERMISSION) {
					text.append(this.server).append(" refused what the locks need (key prefix '")
						.append(this.keyPrefix).append("').");
				}
				else {
					text.append(this.server).append(" answered the locks' startup check with an error.");
				}
			}
		}
		for (PreflightFinding finding : this.findings) {
			text.append(System.lineSeparator()).append(" - ").append(finding.check()).append(": ")
				.append(finding.error().message());
		}
		return text.toString();
	}

	/**
	 * What the operator should change; empty when the preflight passed.
	 * @return the action, for the failure report
	 */
	public String action() {
		if (this.outcome == Outcome.PASSED) {
			return "";
		}
		if (this.outcome == Outcome.UNAVAILABLE) {
			return "Nothing, if Redis is expected to come back: locks wait for it. Otherwise check spring.data.redis.* "
					+ "(host, port, url, timeout).";
		}
		RedisErrorKind kind = decisiveKind();
		String escape = "To start anyway, set distlock.preflight.mode=warn (the 'locks' health is then DOWN) "
				+ "or distlock.preflight.enabled=false.";
		if (kind == RedisErrorKind.AUTHENTICATION) {
			return String.format("Set spring.data.redis.username and spring.data.redis.password (or the user info of "
					+ "spring.data.redis.url) to a user and password that Redis accepts; a server secured by requirepass "
					+ "alone takes the password with no username.%n") + escape;
		}
		if (kind == RedisErrorKind.TLS) {
			return String.format("Give spring.data.redis.ssl.bundle an SSL bundle (spring.ssl.bundle.*) whose trust store "
					+ "holds the CA that signed the server's certificate; if the server asks for client certificates "
					+ "(tls-auth-clients), give the bundle a key store with a certificate the server's CA signed; and "
					+ "connect with a host name that the server's certificate lists.%n") + escape;
		}
		if (kind == RedisErrorKind.PERMISSION) {
			return String.format("Grant the ACL user '%s' what it lacks: ACL SETUSER %s %s%n"
					+ "The minimal ACL for key prefix '%s' is: %s%n(on Redis Cluster add +spublish +ssubscribe "
					+ "+sunsubscribe, with distlock.replica-acks add +wait; see docs/guide/security.md in the "
					+ "starter's repository).%n", this.user,
					this.user, String.join(" ", grants()), this.keyPrefix, LockPreflight.minimalAcl(this.keyPrefix))
					+ escape;
		}
		return String.format("Point spring.data.redis.* at a primary Redis (6.2 or later) that runs Lua scripts and "
				+ "pub/sub.%n") + escape;
	}

	/** How the preflight ended. */
	public enum Outcome {

		/** Redis allowed every command, key and channel the locks need. */
		PASSED,

		/** Redis refused the credentials, the TLS handshake, or something the locks need. */
		FAILED,

		/** Redis could not be reached, or did not answer in time: nothing could be checked. */
		UNAVAILABLE

	}

}
