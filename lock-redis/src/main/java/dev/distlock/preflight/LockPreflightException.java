package dev.distlock.preflight;

import org.springframework.util.Assert;

/**
 * Thrown at startup when Redis refuses the application's credentials, its TLS handshake, or a command, key or channel
 * the locks need. {@link #getReport()} says what to grant or change; with Spring Boot, the starter's failure analyzer
 * ({@code dev.distlock.autoconfigure.LockPreflightFailureAnalyzer}) prints it as the start's failure report.
 *
 * @since 0.1.0
 */
public class LockPreflightException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient PreflightReport report;

	/**
	 * A start that the preflight refused.
	 * @param report what the preflight found; its description is the message
	 */
	public LockPreflightException(PreflightReport report) {
		super(message(report));
		this.report = report;
	}

	private static String message(PreflightReport report) {
		Assert.notNull(report, "'report' must not be null");
		return report.description();
	}

	/**
	 * What the preflight found.
	 * @return the report
	 */
	public PreflightReport getReport() {
		return this.report;
	}

}
