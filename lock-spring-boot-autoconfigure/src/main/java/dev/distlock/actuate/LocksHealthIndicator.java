package dev.distlock.actuate;

import java.util.Locale;

import dev.distlock.core.LockOperatorView;
import dev.distlock.core.RenewalStatus;
import dev.distlock.preflight.LockPreflightRunner;
import dev.distlock.preflight.PreflightReport;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.util.Assert;

/**
 * The {@code locks} health: {@code UP} with the number of held leases and waiting threads, and a configurable status
 * ({@code DOWN} by default, or {@code OUT_OF_SERVICE}) while the watchdog fails to renew some held leases, which will
 * be lost when their lease time runs out unless the store answers again. It only reads the engine's
 * {@link LockOperatorView}: it never calls the store itself, so a hung server cannot hang the health check, and it
 * works on any engine that offers the view.
 * <p>
 * A lease that turns out to be lost (Redis came back without it, or it could not be renewed for its whole lease time)
 * is no longer failing renewal: nothing can renew it any more, and restarting this instance would not bring it back.
 * The indicator is {@code UP} again then, and counts it under {@code lostLeases} until its holder releases it; the
 * loss itself is signalled by a {@link dev.distlock.core.LockLostEvent} and the {@code distlock.leases.lost} counter.
 * <p>
 * When the startup preflight found Redis refusing something the locks need and {@code distlock.preflight.mode=warn} let
 * the application start all the same, the indicator is {@code DOWN} with what was refused and what to grant, until a
 * restart checks again: locks fail until an operator fixes the ACL.
 *
 * @since 0.1.0
 */
public class LocksHealthIndicator implements HealthIndicator {

	private final LockOperatorView operatorView;

	private final Status renewalFailureStatus;

	private final @Nullable LockPreflightRunner preflight;

	/**
	 * An indicator over the given engine's leases.
	 * @param operatorView the engine whose leases and renewals are reported
	 * @param renewalFailureStatus the status while renewals of held leases are failing
	 */
	public LocksHealthIndicator(LockOperatorView operatorView, Status renewalFailureStatus) {
		this(operatorView, renewalFailureStatus, null);
	}

	/**
	 * A health indicator that also reports what the startup preflight found.
	 * @param operatorView the engine whose leases are reported
	 * @param renewalFailureStatus the status while renewals of held leases fail
	 * @param preflight the startup preflight whose refusals (in {@code warn} mode) make the status {@code DOWN};
	 * {@code null} for none (an engine other than Redis has none)
	 */
	public LocksHealthIndicator(LockOperatorView operatorView, Status renewalFailureStatus,
			@Nullable LockPreflightRunner preflight) {
		Assert.notNull(operatorView, "'operatorView' must not be null");
		Assert.notNull(renewalFailureStatus, "'renewalFailureStatus' must not be null");
		this.operatorView = operatorView;
		this.renewalFailureStatus = renewalFailureStatus;
		this.preflight = preflight;
	}

	/**
	 * A status from a property value: 'down', 'out-of-service', 'OUT_OF_SERVICE' or a custom code.
	 * @param code the property value
	 * @return the status, its code upper-cased with '-' turned into '_'
	 */
	public static Status status(String code) {
		Assert.hasText(code, "'code' must not be blank");
		return new Status(code.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
	}

	@Override
	public Health health() {
		RenewalStatus renewals = this.operatorView.renewalStatus();
		PreflightReport preflight = (this.preflight != null) ? this.preflight.getReport() : null;
		boolean refused = preflight != null && preflight.outcome() == PreflightReport.Outcome.FAILED;
		Health.Builder health = refused ? Health.down()
				: renewals.isFailing() ? Health.status(this.renewalFailureStatus) : Health.up();
		health.withDetail("heldLeases", this.operatorView.activeLeaseCount())
			.withDetail("lostLeases", this.operatorView.lostLeaseCount())
			.withDetail("waitingThreads", this.operatorView.waitingThreads());
		if (renewals.isFailing()) {
			health.withDetail("renewalsFailingSince", String.valueOf(renewals.failingSince()))
				.withDetail("leasesFailingRenewal", renewals.failingLeases())
				.withDetail("lastRenewalError", String.valueOf(renewals.lastError()));
		}
		if (preflight != null && !preflight.passed()) {
			health.withDetail("preflight", preflight.description());
			if (refused) {
				health.withDetail("preflightAction", preflight.action());
			}
		}
		return health.build();
	}

}
