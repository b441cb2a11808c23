package dev.distlock.autoconfigure;

import java.io.InputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import dev.distlock.interceptor.LostLeasePolicy;
import dev.distlock.preflight.PreflightMode;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code distlock.*} property, pinned: its name in the generated IDE metadata, its group, and a value that must
 * arrive where the auto-configurations read it ({@code properties.getX().getY()}). The groups (holder, health,
 * actuator, preflight, redlock) are top-level classes that {@link LockProperties} marks as nested; were a mark, a
 * getter or a setter lost, or a property renamed, the processor would leave the group out of the metadata, the binder
 * would skip it, or a native image would lack its reflection hints, and one of these tests fails (issue 27).
 */
class LockPropertiesMetadataTests {

	/** Each property with a value other than its default, in the order of {@link LockProperties}. */
	private static final Map<String, String> VALUES = values();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(PropertiesOnly.class);

	private static Map<String, String> values() {
		Map<String, String> values = new LinkedHashMap<>();
		values.put("distlock.enabled", "false");
		values.put("distlock.key-prefix", "orders");
		values.put("distlock.default-ttl", "45s");
		values.put("distlock.default-wait-time", "7s");
		values.put("distlock.max-hold", "10m");
		values.put("distlock.max-hold-interrupt", "true");
		values.put("distlock.renewal-ratio", "0.5");
		values.put("distlock.advice-order", "42");
		values.put("distlock.on-lost-lease", "warn");
		values.put("distlock.idle-unsubscribe", "3s");
		values.put("distlock.local-hand-overs", "2");
		values.put("distlock.fair-entry-ttl", "5s");
		values.put("distlock.replica-acks", "1");
		values.put("distlock.replica-ack-timeout", "250ms");
		values.put("distlock.holder.application", "inventory");
		values.put("distlock.holder.instance", "pod-7");
		values.put("distlock.holder.store-label", "false");
		values.put("distlock.health.renewal-failure-status", "out-of-service");
		values.put("distlock.actuator.force-release.enabled", "true");
		values.put("distlock.preflight.enabled", "false");
		values.put("distlock.preflight.mode", "warn");
		values.put("distlock.preflight.timeout", "3s");
		values.put("distlock.redlock.nodes", "redis://a:6380,redis://b:6381,redis://c:6382");
		values.put("distlock.redlock.node-timeout", "80ms");
		values.put("distlock.redlock.drift-factor", "0.02");
		values.put("distlock.redlock.restart-quarantine", "1m");
		return values;
	}

	@Test
	void theMetadataDescribesExactlyThePinnedProperties() throws Exception {
		List<String> names = metadata("$.properties[*].name");
		assertThat(names.stream().filter(name -> name.startsWith("distlock.")))
			.containsExactlyInAnyOrderElementsOf(VALUES.keySet());
	}

	@Test
	void theMetadataHasEveryGroupWithTheGetterThatBindsIt() throws Exception {
		List<Map<String, Object>> groups = metadata("$.groups");
		assertThat(groups).anySatisfy(group -> assertThat(group).containsEntry("name", "distlock")
			.containsEntry("type", LockProperties.class.getName()));
		Map<String, Object> sources = new LinkedHashMap<>();
		groups.stream()
			.filter(group -> ((String) group.get("name")).startsWith("distlock."))
			.forEach(group -> sources.put((String) group.get("name"), group.get("sourceMethod")));
		assertThat(sources).containsOnly(Map.entry("distlock.holder", "getHolder()"),
				Map.entry("distlock.health", "getHealth()"), Map.entry("distlock.actuator", "getActuator()"),
				Map.entry("distlock.actuator.force-release", "getForceRelease()"),
				Map.entry("distlock.preflight", "getPreflight()"), Map.entry("distlock.redlock", "getRedlock()"));
	}

	@Test
	void aValueForEveryPropertyArrives() {
		this.runner.withPropertyValues(VALUES.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
			.toArray(String[]::new)).run(context -> {
				LockProperties properties = context.getBean(LockProperties.class);
				assertThat(properties.isEnabled()).isFalse();
				assertThat(properties.getKeyPrefix()).isEqualTo("orders");
				assertThat(properties.getDefaultTtl()).isEqualTo(Duration.ofSeconds(45));
				assertThat(properties.getDefaultWaitTime()).isEqualTo(Duration.ofSeconds(7));
				assertThat(properties.getMaxHold()).isEqualTo(Duration.ofMinutes(10));
				assertThat(properties.isMaxHoldInterrupt()).isTrue();
				assertThat(properties.getRenewalRatio()).isEqualTo(0.5);
				assertThat(properties.getAdviceOrder()).isEqualTo(42);
				assertThat(properties.getOnLostLease()).isEqualTo(LostLeasePolicy.WARN);
				assertThat(properties.getIdleUnsubscribe()).isEqualTo(Duration.ofSeconds(3));
				assertThat(properties.getLocalHandOvers()).isEqualTo(2);
				assertThat(properties.getFairEntryTtl()).isEqualTo(Duration.ofSeconds(5));
				assertThat(properties.getReplicaAcks()).isEqualTo(1);
				assertThat(properties.getReplicaAckTimeout()).isEqualTo(Duration.ofMillis(250));
				assertThat(properties.getHolder().getApplication()).isEqualTo("inventory");
				assertThat(properties.getHolder().getInstance()).isEqualTo("pod-7");
				assertThat(properties.getHolder().isStoreLabel()).isFalse();
				assertThat(properties.getHealth().getRenewalFailureStatus()).isEqualTo("out-of-service");
				assertThat(properties.getActuator().getForceRelease().isEnabled()).isTrue();
				assertThat(properties.getPreflight().isEnabled()).isFalse();
				assertThat(properties.getPreflight().getMode()).isEqualTo(PreflightMode.WARN);
				assertThat(properties.getPreflight().getTimeout()).isEqualTo(Duration.ofSeconds(3));
				assertThat(properties.getRedlock().getNodes()).containsExactly("redis://a:6380", "redis://b:6381",
						"redis://c:6382");
				assertThat(properties.getRedlock().getNodeTimeout()).isEqualTo(Duration.ofMillis(80));
				assertThat(properties.getRedlock().getDriftFactor()).isEqualTo(0.02);
				assertThat(properties.getRedlock().getRestartQuarantine()).isEqualTo(Duration.ofMinutes(1));
			});
	}

	/** What the binder needs in a native image: the setters of every group, found from {@link LockProperties}. */
	@Test
	void everyGroupGetsReflectionHintsForItsSetters() throws Exception {
		RuntimeHints hints = new RuntimeHints();
		BindableRuntimeHintsRegistrar.forTypes(LockProperties.class).registerHints(hints);

		ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();
		assertThat(hints)
			.matches(reflection.onMethodInvocation(LockProperties.class.getMethod("setDefaultTtl", Duration.class)))
			.matches(reflection.onMethodInvocation(LockHolderProperties.class.getMethod("setInstance", String.class)))
			.matches(reflection.onMethodInvocation(LockHealthProperties.class.getMethod("setRenewalFailureStatus",
					String.class)))
			.matches(reflection.onMethodInvocation(LockActuatorProperties.ForceRelease.class.getMethod("setEnabled",
					boolean.class)))
			.matches(reflection.onMethodInvocation(LockPreflightProperties.class.getMethod("setTimeout",
					Duration.class)))
			.matches(reflection.onMethodInvocation(RedlockProperties.class.getMethod("setNodes", List.class)));
	}

	private <T> T metadata(String path) throws Exception {
		try (InputStream json = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(json).as("generated metadata").isNotNull();
			return JsonPath.parse(json).read(path);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(LockProperties.class)
	static class PropertiesOnly {

	}

}
