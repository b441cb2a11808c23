package dev.distlock.sample.inventory.redis;

import java.util.List;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code inventory.embedded-redis.enabled} is true, or when it is unset and no Redis address is
 * configured under {@code spring.data.redis}.
 */
class OnEmbeddedRedisCondition extends SpringBootCondition {

	static final String ENABLED = "inventory.embedded-redis.enabled";

	/** Any of these means the user chose a Redis. */
	private static final List<String> ADDRESS_PROPERTIES = List.of("spring.data.redis.url", "spring.data.redis.host",
			"spring.data.redis.port", "spring.data.redis.sentinel.master", "spring.data.redis.sentinel.nodes",
			"spring.data.redis.cluster.nodes", "spring.data.redis.masterreplica.nodes");

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Binder binder = Binder.get(context.getEnvironment());
		Boolean enabled = binder.bind(ENABLED, Boolean.class).orElse(null);
		if (enabled != null) {
			return new ConditionOutcome(enabled, ENABLED + " is " + enabled);
		}
		for (String name : ADDRESS_PROPERTIES) {
			if (binder.bind(name, Bindable.of(String.class)).isBound()
					|| binder.bind(name, Bindable.listOf(String.class)).isBound()) {
				return ConditionOutcome.noMatch(name + " is set");
			}
		}
		return ConditionOutcome.match("no Redis address is configured");
	}

}
