package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockSettings;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.util.Assert;

/**
 * The settings both engines take, with their defaults and checks in one place: the lock keys' prefix, the renewal
 * ratio, the idle unsubscribe delay, the holder label, the events, listeners and threads.
 * {@link RedisLockServiceBuilder} and {@link RedlockLockServiceBuilder} keep their public fluent setters (each returns its own builder type, which a
 * shared generic base class would change in the compiled signatures) and hand each value here; the services read them
 * from here. What differs stays in each builder: the connection factory or nodes, and each engine's own settings.
 */
final class EngineSettings {

	String keyPrefix = "lock";

	double renewalRatio = 1.0 / 3;

	Duration idleUnsubscribe = Duration.ofSeconds(1);

	String threadNamePrefix;

	String holderApplication = HolderLabel.DEFAULT_APPLICATION;

	/** Whether leases store their holder label in Redis. */
	boolean storeHolderLabel = true;

	/** The holder labels' instance; null for the host's name, looked up when the service is built. */
	@Nullable String holderInstance;

	@Nullable ApplicationEventPublisher eventPublisher;

	@Nullable ThreadFactory threadFactory;

	final List<LockListener> listeners = new ArrayList<>();

	EngineSettings(String threadNamePrefix) {
		this.threadNamePrefix = threadNamePrefix;
	}

	void keyPrefix(String keyPrefix) {
		this.keyPrefix = LockSettings.checkKeyPrefix(keyPrefix, "'keyPrefix'");
	}

	void renewalRatio(double renewalRatio) {
		this.renewalRatio = LockSettings.checkRenewalRatio(renewalRatio, "'renewalRatio'");
	}

	void idleUnsubscribe(Duration idleUnsubscribe) {
		this.idleUnsubscribe = LockSettings.checkIdleUnsubscribe(idleUnsubscribe, "'idleUnsubscribe'");
	}

	void listener(LockListener listener) {
		Assert.notNull(listener, "'listener' must not be null");
		this.listeners.add(listener);
	}

	void holderApplication(String application) {
		Assert.hasText(application, "'application' must not be blank");
		this.holderApplication = application;
	}

	void holderInstance(String instance) {
		Assert.hasText(instance, "'instance' must not be blank");
		this.holderInstance = instance;
	}

	void threadNamePrefix(String threadNamePrefix) {
		Assert.hasText(threadNamePrefix, "'threadNamePrefix' must not be blank");
		this.threadNamePrefix = threadNamePrefix;
	}

	/** {@return the instance the holder labels name: the one set, else the host's name, looked up now} */
	String holderInstanceOrHost() {
		return (this.holderInstance != null) ? this.holderInstance : HolderLabel.hostName();
	}

}
