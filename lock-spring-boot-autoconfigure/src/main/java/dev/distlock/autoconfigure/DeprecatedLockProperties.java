package dev.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.OriginTrackedMapPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginTrackedValue;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Keeps the {@code lock.*} properties of earlier versions working for one more release, as their {@code distlock.*}
 * successors. Every {@code lock.*} property that is set while its successor is not is copied under the new name into
 * a property source of the lowest precedence (keeping where it was set, for Boot's failure reports), so that
 * {@link LockProperties}, {@code @Value("${distlock...}")} and placeholders in {@code @DistributedLock} all see it. A
 * successor that is set wins wherever it is set. One warning at startup names every old property and its new name.
 * <p>
 * A bean factory post-processor rather than an {@code EnvironmentPostProcessor}, so that it works in every
 * application context that imports the auto-configuration, those of an {@code ApplicationContextRunner} included. It
 * runs before any bean is made, but after the conditions of the configuration classes were evaluated: the one
 * condition on a property, {@code distlock.enabled}, reads both names itself ({@link ConditionalOnLocksEnabled}).
 */
final class DeprecatedLockProperties implements BeanFactoryPostProcessor, EnvironmentAware, PriorityOrdered {

	/** The name of the property source with the copied values. */
	static final String PROPERTY_SOURCE_NAME = "distlockDeprecatedLockProperties";

	static final String OLD_PREFIX = "lock";

	static final String NEW_PREFIX = "distlock";

	/** Every property of {@link LockProperties}, after the prefix. */
	static final List<String> PROPERTIES = List.of("enabled", "key-prefix", "default-ttl", "default-wait-time",
			"renewal-ratio", "advice-order", "on-lost-lease", "idle-unsubscribe", "local-hand-overs",
			"health.renewal-failure-status", "actuator.force-release.enabled");

	private static final Log logger = LogFactory.getLog(DeprecatedLockProperties.class);

	private @Nullable ConfigurableEnvironment environment;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = (environment instanceof ConfigurableEnvironment configurable) ? configurable : null;
	}

	@Override
	public int getOrder() {
		// before any post-processor that reads the environment, such as the placeholder configurer
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		if (this.environment == null || this.environment.getPropertySources().contains(PROPERTY_SOURCE_NAME)) {
			return;
		}
		Iterable<ConfigurationPropertySource> sources = ConfigurationPropertySources.get(this.environment);
		Map<String, Object> copied = new LinkedHashMap<>();
		List<String> renamed = new ArrayList<>();
		List<String> ignored = new ArrayList<>();
		for (String property : PROPERTIES) {
			ConfigurationProperty old = find(sources, OLD_PREFIX + "." + property);
			if (old == null) {
				continue;
			}
			String newName = NEW_PREFIX + "." + property;
			Origin origin = old.getOrigin();
			String where = (origin != null) ? " (" + origin + ")" : "";
			if (find(sources, newName) != null) {
				ignored.add(old.getName() + where + ", as " + newName + " is set");
			}
			else {
				copied.put(newName, OriginTrackedValue.of(old.getValue(), origin));
				renamed.add(old.getName() + " to " + newName + where);
			}
		}
		if (!copied.isEmpty()) {
			this.environment.getPropertySources().addLast(new OriginTrackedMapPropertySource(PROPERTY_SOURCE_NAME, copied, true));
		}
		if (!renamed.isEmpty() || !ignored.isEmpty()) {
			logger.warn(message(renamed, ignored));
		}
	}

	private static String message(List<String> renamed, List<String> ignored) {
		StringBuilder message = new StringBuilder("The lock.* properties are deprecated, and stop working in the next "
				+ "release: distlock.* replaces them.");
		if (!renamed.isEmpty()) {
			message.append(" Rename ").append(String.join(", ", renamed)).append('.');
		}
		if (!ignored.isEmpty()) {
			message.append(" Ignored: ").append(String.join(", ", ignored)).append('.');
		}
		return message.toString();
	}

	private static @Nullable ConfigurationProperty find(Iterable<ConfigurationPropertySource> sources, String name) {
		ConfigurationPropertyName propertyName = ConfigurationPropertyName.of(name);
		for (ConfigurationPropertySource source : sources) {
			ConfigurationProperty property = source.getConfigurationProperty(propertyName);
			if (property != null) {
				return property;
			}
		}
		return null;
	}

	/** Registers the post-processor once, however many of the auto-configurations import it. */
	static class Registrar implements ImportBeanDefinitionRegistrar {

		private static final String BEAN_NAME = DeprecatedLockProperties.class.getName();

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			if (!registry.containsBeanDefinition(BEAN_NAME)) {
				RootBeanDefinition definition = new RootBeanDefinition(DeprecatedLockProperties.class);
				definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
				registry.registerBeanDefinition(BEAN_NAME, definition);
			}
		}

	}

}
