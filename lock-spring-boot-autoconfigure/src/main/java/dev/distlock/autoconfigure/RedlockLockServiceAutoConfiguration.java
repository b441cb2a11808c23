package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockService;
import dev.distlock.redis.RedlockLockService;
import dev.distlock.redis.RedlockLockServiceBuilder;
import io.lettuce.core.ClientOptions;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Auto-configures the Redlock engine, a {@link RedlockLockService} over the independent Redis masters of
 * {@code distlock.redlock.nodes}, unless the application defines a {@link LockService} of its own. It runs before
 * {@link RedisLockServiceAutoConfiguration}, whose single-server engine then backs off; {@code @DistributedLock}, the
 * observation, metrics, endpoint and health work on it unchanged.
 * <p>
 * Each node gets a Lettuce connection factory of its own, created and destroyed with the engine, whose command
 * timeout is the per-node timeout (when set; otherwise the ceiling of the adaptive one) and which rejects commands while its node is disconnected (a command queued for a
 * node that is down would otherwise run when the node returns, long after the engine gave up on it).
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = RedisLockServiceAutoConfiguration.class, after = DataRedisAutoConfiguration.class)
@ConditionalOnClass(value = { RedisConnectionFactory.class, LettuceConnectionFactory.class }, name = "io.lettuce.core.RedisClient")
@ConditionalOnLocksEnabled
@Conditional(RedlockLockServiceAutoConfiguration.OnRedlockNodes.class)
@EnableConfigurationProperties(LockProperties.class)
public final class RedlockLockServiceAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public RedlockLockServiceAutoConfiguration() {
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean(LockService.class)
	RedlockLockService redlockLockService(LockProperties properties, ApplicationEventPublisher eventPublisher,
			ObjectProvider<LockListener> listeners, Environment environment) {
		RedlockProperties redlock = properties.getRedlock();
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		try {
			for (int i = 0; i < redlock.getNodes().size(); i++) {
				factories.add(nodeFactory(redlock, i));
			}
			RedlockLockServiceBuilder builder = RedlockLockService.builder(new ArrayList<>(factories))
				.keyPrefix(properties.getKeyPrefix())
				.driftFactor(redlock.getDriftFactor())
				.restartQuarantine(redlock.getRestartQuarantine())
				.renewalRatio(properties.getRenewalRatio())
				.idleUnsubscribe(properties.getIdleUnsubscribe())
				.holderApplication(properties.getHolder().applicationOrDefault(environment))
				.holderInstance(properties.getHolder().instanceOrDefault())
				.storeHolderLabel(properties.getHolder().isStoreLabel())
				.eventPublisher(eventPublisher);
			if (redlock.getNodeTimeout() != null) {
				builder.nodeTimeout(redlock.getNodeTimeout());
			}
			listeners.orderedStream().forEach(builder::listener);
			if (Threading.VIRTUAL.isActive(environment)) {
				builder.threadFactory(new VirtualThreadTaskExecutor("distlock-").getVirtualThreadFactory());
			}
			return new NodeOwningRedlockLockService(builder, factories);
		}
		catch (RuntimeException ex) {
			factories.forEach(LettuceConnectionFactory::destroy);
			throw ex;
		}
	}

	private static LettuceConnectionFactory nodeFactory(RedlockProperties redlock, int index) {
		String url = redlock.getNodes().get(index);
		if (url == null || !(url.startsWith("redis://") || url.startsWith("rediss://"))) {
			throw new IllegalArgumentException("distlock.redlock.nodes[" + index + "] must be a Redis URL "
					+ "('redis://[user:password@]host:port' or 'rediss://...'), but was '" + url + "'");
		}
		RedisConfiguration configuration;
		try {
			configuration = LettuceConnectionFactory.createRedisConfiguration(url);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("distlock.redlock.nodes[" + index + "] is not a valid Redis URL: '"
					+ url.replaceAll("//[^@/]*@", "//***@") + "'", ex);
		}
		LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
			.commandTimeout((redlock.getNodeTimeout() != null) ? redlock.getNodeTimeout()
					: Duration.ofMillis(RedlockLockServiceBuilder.ADAPTIVE_CEILING_MILLIS))
			.clientOptions(ClientOptions.builder()
				.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
				.build());
		if (url.startsWith("rediss://")) {
			client.useSsl();
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration, client.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/** The engine and the node factories it was built on, closed together (the engine first). */
	static final class NodeOwningRedlockLockService extends RedlockLockService {

		private final List<LettuceConnectionFactory> factories;

		private final AtomicBoolean closed = new AtomicBoolean();

		NodeOwningRedlockLockService(RedlockLockServiceBuilder builder, List<LettuceConnectionFactory> factories) {
			super(builder);
			this.factories = factories;
		}

		/** Close the engine, then its node clients; once, whether the context stops it or destroys it first. */
		@Override
		public void close() {
			if (!this.closed.compareAndSet(false, true)) {
				return;
			}
			try {
				super.close();
			}
			finally {
				this.factories.forEach(LettuceConnectionFactory::destroy);
			}
		}

	}

	/** Matches when {@code distlock.redlock.nodes} has at least one entry, as a list or comma-separated. */
	static final class OnRedlockNodes extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			List<String> nodes = Binder.get(context.getEnvironment())
				.bind("distlock.redlock.nodes", Bindable.listOf(String.class))
				.orElse(List.of());
			return nodes.isEmpty() ? ConditionOutcome.noMatch("distlock.redlock.nodes is not set")
					: ConditionOutcome.match("distlock.redlock.nodes has " + nodes.size() + " node(s)");
		}

	}

}
