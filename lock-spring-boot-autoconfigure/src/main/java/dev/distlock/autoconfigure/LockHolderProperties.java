package dev.distlock.autoconfigure;

import dev.distlock.core.HolderLabel;
import org.jspecify.annotations.Nullable;

import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * The holder label of this instance's leases: what log lines, exception messages and Lease.holder() name a
 * lease's holder by, instead of its owner id (which a release presents to Redis).
 * <p>
 * Bound under {@code distlock.holder} through {@link LockProperties#getHolder()}: one group of
 * {@link LockProperties}, in a class of its own only to keep each class short; the property names, defaults and
 * checks are those of the group.
 */
public class LockHolderProperties {

	/**
	 * Application named in the holder label of this instance's leases. Defaults to spring.application.name, else
	 * 'application'.
	 */
	private @Nullable String application;

	/**
	 * Instance named in the holder label of this instance's leases, for an operator to find it: a pod or host
	 * name, or an id of the deployment's own. Defaults to the host's name: the HOSTNAME environment variable (a
	 * Kubernetes pod's name), else the name the operating system reports.
	 */
	private @Nullable String instance;

	/**
	 * Whether each lease stores its holder label in Redis, once per hold, so that any instance's holder query, the
	 * store listing (GET /actuator/locks/all) and a forced release name the holder.
	 */
	private boolean storeLabel = true;

	/** Holder label settings with their defaults. */
	public LockHolderProperties() {
	}

	/** {@return whether each lease stores its holder label in Redis} */
	public boolean isStoreLabel() {
		return this.storeLabel;
	}

	/**
	 * Set whether each lease stores its holder label in Redis.
	 * @param storeLabel {@code false} to store none
	 */
	public void setStoreLabel(boolean storeLabel) {
		this.storeLabel = storeLabel;
	}

	/** {@return the application named in the holder label, or {@code null} for the default} */
	public @Nullable String getApplication() {
		return this.application;
	}

	/**
	 * Set the application named in the holder label.
	 * @param application the application's name; not blank, {@code null} for the default
	 */
	public void setApplication(@Nullable String application) {
		this.application = notBlank(application, "distlock.holder.application");
	}

	/** {@return the instance named in the holder label, or {@code null} for the host's name} */
	public @Nullable String getInstance() {
		return this.instance;
	}

	/**
	 * Set the instance named in the holder label.
	 * @param instance the instance's name; not blank, {@code null} for the host's name
	 */
	public void setInstance(@Nullable String instance) {
		this.instance = notBlank(instance, "distlock.holder.instance");
	}

	/**
	 * The application the engines' holder labels name: this one, else {@code spring.application.name}, else
	 * {@value HolderLabel#DEFAULT_APPLICATION}.
	 * @param environment where {@code spring.application.name} is read
	 * @return the application's name, not blank
	 */
	public String applicationOrDefault(Environment environment) {
		if (this.application != null) {
			return this.application;
		}
		String name = environment.getProperty("spring.application.name");
		return StringUtils.hasText(name) ? name.trim() : HolderLabel.DEFAULT_APPLICATION;
	}

	/**
	 * The instance the engines' holder labels name: this one, else the host's name
	 * ({@link HolderLabel#hostName()}).
	 * @return the instance's name, not blank
	 */
	public String instanceOrDefault() {
		return (this.instance != null) ? this.instance : HolderLabel.hostName();
	}

	private static @Nullable String notBlank(@Nullable String value, String property) {
		if (value != null && value.isBlank()) {
			throw new IllegalArgumentException(property + " must not be blank; leave it unset for the default");
		}
		return (value != null) ? value.trim() : null;
	}

}
