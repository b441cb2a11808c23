package dev.distlock.observability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.jayway.jsonpath.JsonPath;
import dev.distlock.core.Lease;
import dev.distlock.core.LockActivity;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;
import org.yaml.snakeyaml.Yaml;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard and the Prometheus alert rules in {@code docs/observability/} use only what the starter
 * registers: every {@code distlock_*} series they name appears in a scrape of the starter's meters, every label they
 * match on or group by is one of that series' labels (or {@code instance} and {@code le}, which Prometheus adds), and
 * every label value they match exactly is one the meters produce. A renamed meter, tag or tag value fails here, not on
 * an operator's empty panel at 3 a.m.
 */
class ObservabilityAssetsTests {

	private static final Path DOCS = Path.of("..", "docs", "observability");

	private static final Pattern SERIES = Pattern.compile("\\b(distlock_[a-z_]+)(\\{([^}]*)})?");

	private static final Pattern MATCHER = Pattern.compile("(\\w+)\\s*(=~|!~|!=|=)\\s*\"([^\"]*)\"");

	private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");

	/** Labels Prometheus or the histogram add to every series. */
	private static final Set<String> ADDED_LABELS = Set.of("instance", "job", "le");

	/** Each series of a scrape, with its labels and the values each label took. */
	private static final Map<String, Map<String, Set<String>>> scraped = new HashMap<>();

	@BeforeAll
	static void scrapeEveryMeter() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		LockMetrics metrics = new LockMetrics(registry);
		LockRequest request = LockRequest.of("sku-1", Duration.ofSeconds(10), Duration.ZERO).withName("inventory");
		Lease lease = Mockito.mock(Lease.class);
		Mockito.when(lease.name()).thenReturn("inventory");
		Mockito.when(lease.isLost()).thenReturn(true);
		metrics.acquired(request, lease, Duration.ofMillis(3));
		metrics.notAcquired(request, Duration.ofSeconds(1), null);
		metrics.notAcquired(request, Duration.ofSeconds(1), new IllegalStateException("unreachable"));
		metrics.renewed("inventory", false);
		for (LockLostEvent.Detection detection : LockLostEvent.Detection.values()) {
			metrics.lost(new LockLostEvent("sku-1", "inventory", "owner", 1, detection, Instant.now()));
		}
		metrics.released(lease, Duration.ofMillis(20), false);
		for (LockListener.Notification operation : LockListener.Notification.values()) {
			metrics.notificationRefused(operation, "lock:{sku-1}:released", "NOPERM");
		}
		for (LockListener.Abandonment reason : LockListener.Abandonment.values()) {
			metrics.discardAbandoned("sku-1", reason, "detail");
		}
		LockOperatorView service = Mockito.mock(LockOperatorView.class);
		Mockito.when(service.activityByName()).thenReturn(new LockActivity(Map.of("inventory", 1), Map.of("inventory", 1)));
		Mockito.doAnswer(invocation -> {
			invocation.<java.util.function.Consumer<String>>getArgument(0).accept("inventory");
			return null;
		}).when(service).onLockName(Mockito.any());
		new LockServiceMetrics(service, Duration.ofMinutes(1)).bindTo(registry);
		for (String line : registry.scrape().split("\n")) {
			Matcher series = SERIES.matcher(line);
			if (line.startsWith("#") || !series.lookingAt()) {
				continue;
			}
			Map<String, Set<String>> labels = scraped.computeIfAbsent(series.group(1), name -> new HashMap<>());
			Matcher label = MATCHER.matcher((series.group(3) != null) ? series.group(3) : "");
			while (label.find()) {
				labels.computeIfAbsent(label.group(1), name -> new HashSet<>()).add(label.group(3));
			}
		}
	}

	@Test
	void theDashboardQueriesOnlyWhatTheStarterRegisters() throws IOException {
		String dashboard = Files.readString(DOCS.resolve("distlock-dashboard.json"));
		List<String> queries = new ArrayList<>(JsonPath.read(dashboard, "$.panels[*].targets[*].expr"));
		List<String> variables = JsonPath.read(dashboard, "$.templating.list[?(@.type == 'query')].query");
		assertThat(queries).as("panel queries").hasSizeGreaterThanOrEqualTo(10);
		assertThat(variables).as("variables").isNotEmpty();
		queries.addAll(variables);
		List<String> titles = JsonPath.read(dashboard, "$.panels[*].title");
		assertThat(String.join("\n", titles)).contains("p99", "gave up", "held", "waiting", "lost", "Renewal failures",
				"notifications refused");
		queries.forEach(ObservabilityAssetsTests::assertKnown);
	}

	@Test
	void theAlertRulesQueryOnlyWhatTheStarterRegistersAndSayWhatFired() throws IOException {
		Map<String, Object> rules = new Yaml().load(Files.readString(DOCS.resolve("distlock-alerts.yml")));
		List<Map<String, Object>> all = new ArrayList<>();
		for (Object group : (List<?>) rules.get("groups")) {
			for (Object rule : (List<?>) ((Map<?, ?>) group).get("rules")) {
				@SuppressWarnings("unchecked")
				Map<String, Object> typed = (Map<String, Object>) rule;
				all.add(typed);
			}
		}
		assertThat(all).extracting(rule -> rule.get("alert")).contains("DistlockLeaseLost", "DistlockRenewalsFailing",
				"DistlockAcquisitionsTimingOut", "DistlockNotificationsRefused").doesNotHaveDuplicates();
		for (Map<String, Object> rule : all) {
			assertThat(rule).as("rule %s", rule.get("alert")).containsKeys("alert", "expr", "labels", "annotations");
			assertThat(keys(rule.get("labels"))).as("labels of %s", rule.get("alert")).contains("severity");
			assertThat(keys(rule.get("annotations"))).as("annotations of %s", rule.get("alert"))
				.contains("summary", "description");
			assertKnown(String.valueOf(rule.get("expr")));
		}
	}

	private static Set<String> keys(Object map) {
		Set<String> keys = new HashSet<>();
		((Map<?, ?>) map).keySet().forEach(key -> keys.add(String.valueOf(key)));
		return keys;
	}

	/**
	 * Every series {@code query} names is scraped; every label it matches or groups by is one of the labels of the
	 * series it names; every exact match is a value the meters produce.
	 */
	private static void assertKnown(String query) {
		Matcher series = SERIES.matcher(query);
		Set<String> labelsOfQuery = new HashSet<>(ADDED_LABELS);
		int found = 0;
		while (series.find()) {
			found++;
			String name = series.group(1);
			assertThat(scraped).as("series in %s", query).containsKey(name);
			Map<String, Set<String>> labels = scraped.get(name);
			labelsOfQuery.addAll(labels.keySet());
			Matcher matcher = MATCHER.matcher((series.group(3) != null) ? series.group(3) : "");
			while (matcher.find()) {
				String label = matcher.group(1);
				if (ADDED_LABELS.contains(label)) {
					continue;
				}
				assertThat(labels).as("labels of %s in %s", name, query).containsKey(label);
				if (matcher.group(2).equals("=")) {
					assertThat(labels.get(label)).as("values of %s on %s in %s", label, name, query)
						.contains(matcher.group(3));
				}
			}
		}
		assertThat(found).as("distlock series in %s", query).isPositive();
		Matcher grouping = GROUPING.matcher(query);
		while (grouping.find()) {
			for (String label : grouping.group(1).split(",")) {
				assertThat(labelsOfQuery).as("grouping label in %s", query).contains(label.trim());
			}
		}
	}

}
