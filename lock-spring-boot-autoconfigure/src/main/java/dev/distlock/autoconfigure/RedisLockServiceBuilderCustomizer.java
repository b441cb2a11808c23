package dev.distlock.autoconfigure;

import dev.distlock.redis.RedisLockServiceBuilder;

/**
 * Customizes the builder of the auto-configured Redis engine after the {@code distlock.*} properties were applied, the
 * way Boot's {@code LettuceClientConfigurationBuilderCustomizer} does for the client: every bean of this type is
 * applied, in order. On Spring Boot 4.1, one bean applies {@code spring.data.redis.listener.*} to the engine's listener
 * container (Boot 4.0 has no such configurer, so the starter does not declare it itself):
 * <pre class="code">
 * &#64;Bean
 * RedisLockServiceBuilderCustomizer listenerSettings(RedisMessageListenerContainerConfigurer configurer,
 *         RedisConnectionFactory connectionFactory) {
 *     return (builder) -&gt; builder.listenerContainer((container) -&gt; configurer.configure(container, connectionFactory));
 * }
 * </pre>
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface RedisLockServiceBuilderCustomizer {

	/**
	 * Customize the engine's builder.
	 * @param builder the builder, with the properties applied
	 */
	void customize(RedisLockServiceBuilder builder);

}
