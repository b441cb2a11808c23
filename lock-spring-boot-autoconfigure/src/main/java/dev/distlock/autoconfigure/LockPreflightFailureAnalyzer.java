package dev.distlock.autoconfigure;

import dev.distlock.preflight.LockPreflightException;
import dev.distlock.preflight.PreflightReport;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a {@link LockPreflightException} into Boot's "APPLICATION FAILED TO START" report: the description names what
 * Redis refused, the action what to grant or change. Registered in {@code META-INF/spring.factories}.
 *
 * @since 0.1.0
 */
public class LockPreflightFailureAnalyzer extends AbstractFailureAnalyzer<LockPreflightException> {

	/** Created by Spring Boot from {@code META-INF/spring.factories}; applications do not create it. */
	public LockPreflightFailureAnalyzer() {
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LockPreflightException cause) {
		PreflightReport report = cause.getReport();
		return new FailureAnalysis(report.description(), report.action(), cause);
	}

}
