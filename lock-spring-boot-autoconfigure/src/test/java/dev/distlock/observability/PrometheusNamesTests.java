package dev.distlock.observability;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockOperatorView;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;

import static org.assertj.core.api.Assertions.assertThat;

/** The names and labels the guide documents (docs/guide/observability.md) are the ones a Prometheus scrape shows. */
class PrometheusNamesTests {

	@Test
	void metersAppearUnderTheDocumentedPrometheusNames() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		LockMetrics metrics = new LockMetrics(registry);
		LockRequest request = LockRequest.of("sku-1", Duration.ofSeconds(10), Duration.ZERO).withName("inventory");
		Lease lease = Mockito.mock(Lease.class);
		Mockito.when(lease.name()).thenReturn("inventory");
		Mockito.when(lease.isLost()).thenReturn(true);
		metrics.acquired(request, lease, Duration.ofMillis(3));
		metrics.notAcquired(request, Duration.ofSeconds(1), null);
		metrics.renewed("inventory", true);
		metrics.lost(new LockLostEvent("sku-1", "inventory", "owner", 1, LockLostEvent.Detection.RENEWAL_FOUND_GONE, Instant.now()));
		metrics.released(lease, Duration.ofMillis(20), false);
		metrics.discardAbandoned("sku-1", LockListener.Abandonment.REFUSED, "WRONGTYPE");
		LockOperatorView service = Mockito.mock(LockOperatorView.class);
		Mockito.doAnswer(invocation -> {
			Consumer<String> action = invocation.getArgument(0);
			action.accept("inventory");
			action.accept("reports");
			return null;
		}).when(service).onLockName(Mockito.any());
		Mockito.when(service.activityByName())
			.thenReturn(new LockActivity(Map.of("inventory", 2, "reports", 1), Map.of("inventory", 1)));
		// snapshots that outlive the scrape on any machine, to count them
		new LockServiceMetrics(service, Duration.ofMinutes(1)).bindTo(registry);

		String scrape = registry.scrape();
		assertThat(scrape)
			.contains("distlock_acquire_seconds_bucket{name=\"inventory\",outcome=\"acquired\",le=")
			.contains("distlock_acquire_seconds_count{name=\"inventory\",outcome=\"timed-out\"} 1")
			.contains("distlock_acquire_seconds_sum{name=\"inventory\",outcome=\"acquired\"}")
			.contains("distlock_held_seconds_count{name=\"inventory\"} 1")
			.contains("distlock_renewals_total{name=\"inventory\",outcome=\"success\"} 1")
			.contains("distlock_renewals_total{name=\"inventory\",outcome=\"failure\"} 0")
			.contains("distlock_leases_lost_total{detection=\"renewal-found-gone\",name=\"inventory\"} 1")
			.contains("distlock_releases_gone_total{name=\"inventory\"} 1")
			.contains("distlock_discards_abandoned_total{reason=\"refused\"} 1")
			.contains("distlock_discards_abandoned_total{reason=\"expired\"} 0")
			.contains("distlock_discards_abandoned_total{reason=\"too-many\"} 0")
			.containsPattern("(?m)^distlock_leases_held\\{name=\"inventory\"} 2(\\.0)?$")
			.containsPattern("(?m)^distlock_leases_held\\{name=\"reports\"} 1(\\.0)?$")
			.containsPattern("(?m)^distlock_waiters\\{name=\"inventory\"} 1(\\.0)?$")
			.containsPattern("(?m)^distlock_waiters\\{name=\"reports\"} 0(\\.0)?$")
			.doesNotContainPattern("(?m)^distlock_(leases_held|waiters) ");
		// one snapshot of the service's activity serves all the gauges of a scrape
		Mockito.verify(service, Mockito.times(1)).activityByName();
	}

	@Test
	void aSemaphoresLimitIsAGaugeOfItsNameAndPlainLocksHaveNone() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		LockMetrics metrics = new LockMetrics(registry);
		Lease lease = Mockito.mock(Lease.class);
		LockRequest partnerApi = LockRequest.of("partner-api", Duration.ofSeconds(30), Duration.ZERO)
			.withName("partner-api")
			.permits(5);
		metrics.acquired(partnerApi, lease, Duration.ofMillis(3));
		metrics.acquired(LockRequest.of("sku-1", Duration.ofSeconds(10), Duration.ZERO).withName("inventory"), lease,
				Duration.ofMillis(3));
		// refused for asking another number than the holders' 5: not the limit
		metrics.notAcquired(partnerApi.permits(7), Duration.ZERO, new IllegalStateException("semaphore of 5 permits"));
		assertThat(registry.scrape()).containsPattern("(?m)^distlock_permits_limit\\{name=\"partner-api\"} 5(\\.0)?$")
			.doesNotContain("distlock_permits_limit{name=\"inventory\"}");
		// a timed-out request asked for the holders' number: the semaphore was made again with another size
		metrics.notAcquired(partnerApi.permits(4), Duration.ofSeconds(1), null);
		assertThat(registry.scrape()).containsPattern("(?m)^distlock_permits_limit\\{name=\"partner-api\"} 4(\\.0)?$");
	}

}
