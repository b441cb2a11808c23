package dev.distlock.testing;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockSettings;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.util.Assert;

/**
 * Settings of an {@link InMemoryLockService}; start one with {@link InMemoryLockService#builder()} (a store of its own)
 * or {@link InMemoryLockService#builder(InMemoryLockStore)} (a store shared with other instances).
 *
 * @since 0.1.0
 */
public final class InMemoryLockServiceBuilder {

	private static final SecureRandom RANDOM = new SecureRandom();

	private final @Nullable InMemoryLockStore store;

	private @Nullable LockClock clock;

	private @Nullable String clientId;

	private double renewalRatio = 1.0 / 3;

	private String holderApplication = HolderLabel.DEFAULT_APPLICATION;

	private @Nullable String holderInstance;

	private @Nullable ApplicationEventPublisher eventPublisher;

	private final List<LockListener> listeners = new ArrayList<>();

	InMemoryLockServiceBuilder(@Nullable InMemoryLockStore store) {
		this.store = store;
	}

	/**
	 * The clock of the new store this instance gets (not for an instance on a given store, which has its clock).
	 * Default {@link LockClock#system()}.
	 * @param clock the clock
	 * @return this builder
	 * @throws IllegalStateException if the instance is built on a given store
	 */
	public InMemoryLockServiceBuilder clock(LockClock clock) {
		Assert.notNull(clock, "'clock' must not be null");
		Assert.state(this.store == null, "An instance on a given store uses its clock: create the store with the clock");
		this.clock = clock;
		return this;
	}

	/**
	 * The client id of the instance, the prefix of its owner ids: a readable one for a test's messages, unique among
	 * the open instances of the store. Default: random, as the Redis engine's (16 random bytes, URL-safe Base64).
	 * @param clientId the id; non-blank, without ':'
	 * @return this builder
	 */
	public InMemoryLockServiceBuilder clientId(String clientId) {
		LockSettings.checkKey(clientId, "'clientId'");
		Assert.isTrue(!clientId.contains(":"), () -> "'clientId' must not contain ':', but was '" + clientId + "'");
		this.clientId = clientId;
		return this;
	}

	/**
	 * The part of a lease time after which the watchdog renews a held lease. Default 1/3, as the Redis engine's.
	 * @param renewalRatio between 0 and 1, both exclusive
	 * @return this builder
	 */
	public InMemoryLockServiceBuilder renewalRatio(double renewalRatio) {
		this.renewalRatio = LockSettings.checkRenewalRatio(renewalRatio, "'renewalRatio'");
		return this;
	}

	/**
	 * Where lost leases are published as {@code LockLostEvent}s (the application context, in a Spring test), on the
	 * store's event thread. Default none.
	 * @param eventPublisher the publisher, or {@code null} for none
	 * @return this builder
	 */
	public InMemoryLockServiceBuilder eventPublisher(@Nullable ApplicationEventPublisher eventPublisher) {
		this.eventPublisher = eventPublisher;
		return this;
	}

	/**
	 * The application that the {@linkplain HolderLabel holder label} of the instance's leases names, as the Redis
	 * engine's builder takes it. Default {@value HolderLabel#DEFAULT_APPLICATION}.
	 * @param application the application's name; not blank
	 * @return this builder
	 * @since 0.7.0
	 */
	public InMemoryLockServiceBuilder holderApplication(String application) {
		Assert.hasText(application, "'application' must not be blank");
		this.holderApplication = application;
		return this;
	}

	/**
	 * The instance that the {@linkplain HolderLabel holder label} of the instance's leases names. Default: the host's
	 * name ({@link HolderLabel#hostName()}).
	 * @param instance the instance's name; not blank
	 * @return this builder
	 * @since 0.7.0
	 */
	public InMemoryLockServiceBuilder holderInstance(String instance) {
		Assert.hasText(instance, "'instance' must not be blank");
		this.holderInstance = instance;
		return this;
	}

	/**
	 * Add a listener, told of acquisitions, releases, renewals and losses as the Redis engine tells them.
	 * @param listener the listener
	 * @return this builder
	 */
	public InMemoryLockServiceBuilder listener(LockListener listener) {
		Assert.notNull(listener, "'listener' must not be null");
		this.listeners.add(listener);
		return this;
	}

	/** {@return the instance} */
	public InMemoryLockService build() {
		return new InMemoryLockService(this);
	}

	/** The instance's state, on the given store or a new one. */
	Instance instance() {
		InMemoryLockStore target = (this.store != null) ? this.store
				: new InMemoryLockStore((this.clock != null) ? this.clock : LockClock.system());
		String id = (this.clientId != null) ? this.clientId : randomClientId();
		return new Instance(target, id, this.listeners, this.eventPublisher, this.renewalRatio, this.holderApplication,
				(this.holderInstance != null) ? this.holderInstance : HolderLabel.hostName());
	}

	private static String randomClientId() {
		byte[] bytes = new byte[16];
		RANDOM.nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

}
