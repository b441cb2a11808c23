package dev.distlock.preflight;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.util.Assert;

/**
 * Runs the {@link LockPreflight} once every singleton exists: the connection factory and the lock service are ready
 * then, and the application serves nothing yet (web servers, listeners and schedulers start after, with the context's
 * lifecycle), so a refusal fails the start before any request could need a lock.
 * <p>
 * In {@link PreflightMode#FAIL FAIL} mode a refusal throws a {@link LockPreflightException}; in
 * {@link PreflightMode#WARN WARN} mode it is logged and kept for the {@code locks} health indicator. A Redis that is
 * merely unreachable never fails the start: locks ride through outages, so it is logged and the application starts.
 *
 * @since 0.1.0
 */
public class LockPreflightRunner implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(LockPreflightRunner.class);

	private final LockPreflight preflight;

	private final PreflightMode mode;

	private volatile @Nullable PreflightReport report;

	/**
	 * Run {@code preflight} once every singleton exists.
	 * @param preflight the check
	 * @param mode what a refusal does
	 */
	public LockPreflightRunner(LockPreflight preflight, PreflightMode mode) {
		Assert.notNull(preflight, "'preflight' must not be null");
		Assert.notNull(mode, "'mode' must not be null");
		this.preflight = preflight;
		this.mode = mode;
	}

	@Override
	public void afterSingletonsInstantiated() {
		PreflightReport result = this.preflight.check();
		this.report = result;
		switch (result.outcome()) {
			case PASSED -> {
				if (logger.isDebugEnabled()) {
					logger.debug(result.description());
				}
			}
			case UNAVAILABLE -> logger.warn(result.description() + System.lineSeparator()
					+ "The application starts all the same: locks wait for Redis to come back.");
			case FAILED -> {
				if (this.mode == PreflightMode.FAIL) {
					throw new LockPreflightException(result);
				}
				logger.warn(result.description() + System.lineSeparator() + result.action());
			}
		}
	}

	/**
	 * What the preflight found, or {@code null} before it ran.
	 * @return the report, or {@code null}
	 */
	public @Nullable PreflightReport getReport() {
		return this.report;
	}

	/**
	 * What the preflight does when Redis refuses something the locks need.
	 * @return the mode
	 */
	public PreflightMode getMode() {
		return this.mode;
	}

}
