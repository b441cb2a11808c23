package dev.distlock.core;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;
import org.springframework.util.StringUtils;

/**
 * Who holds a lease, in words an operator can act on: the application, the instance it runs as (a host or pod name,
 * or an id of the operator's choosing) and the owner within it (the acquiring thread's name, or {@code async} /
 * {@code reactive} and the annotated method). Its {@link #toString()} is what this library's log lines and exception
 * messages name a holder by, for example {@code inventory@pod-7 thread "http-nio-8080-exec-3"}.
 * <p>
 * It replaces the owner id there ({@link Lease#owner()}): an owner id is what a release presents to the store, and
 * it carries the instance's client id, so a logged one would tell a reader of the log how to release another
 * instance's lease. A label says who, and nothing a client could present to the store. It is not unique: two leases of
 * one thread, one after the other, have the same label.
 *
 * @param application the application's name ({@code spring.application.name} in a Spring Boot application), not blank
 * @param instance the instance of the application: its host or pod name unless configured, not blank
 * @param ownerDescription the owner within the instance, as {@link LockOwner#description()} gives it, not blank
 * @since 0.7.0
 */
public record HolderLabel(String application, String instance, String ownerDescription) {

	/** The application name of engines that were given none. */
	public static final String DEFAULT_APPLICATION = "application";

	/** The instance name when the host's name could not be found. */
	static final String UNKNOWN_HOST = "unknown-host";

	/**
	 * A label as an engine makes it at acquisition.
	 * @param application the application's name, not blank
	 * @param instance the instance's name, not blank
	 * @param ownerDescription the owner's description, not blank
	 */
	public HolderLabel {
		Assert.hasText(application, "'application' must not be blank");
		Assert.hasText(instance, "'instance' must not be blank");
		Assert.hasText(ownerDescription, "'ownerDescription' must not be blank");
	}

	/**
	 * The label of {@code owner}'s leases in this application instance, as engines make it when they acquire: call it
	 * when the lease is acquired, as a thread's owner is described by its thread's name at that moment.
	 * @param application the application's name, not blank
	 * @param instance the instance's name, not blank
	 * @param owner whose lease it is
	 * @return the label
	 */
	public static HolderLabel of(String application, String instance, LockOwner owner) {
		return new HolderLabel(application, instance, owner.description());
	}

	/**
	 * A label for a holder that nothing more is known of: a lease of an engine that does not label its holders, a
	 * {@link LockLostEvent} made by hand.
	 * @return the label {@code application@<this host> unknown owner}
	 */
	public static HolderLabel unknown() {
		return new HolderLabel(DEFAULT_APPLICATION, hostName(), "unknown owner");
	}

	/**
	 * The name of this host, the default instance name of the engines: the {@code HOSTNAME} environment variable (a
	 * Kubernetes pod's name, a container's id), else {@code COMPUTERNAME} (Windows), else Linux's
	 * {@code /proc/sys/kernel/hostname}, else the local host's name as Java resolves it, on a thread of its own and for
	 * at most a second, as a host whose name does not resolve can make that lookup wait for DNS far longer; found once.
	 * {@code unknown-host} when none of them gives a name. Never throws.
	 * @return the host's name, not blank
	 */
	public static String hostName() {
		return LocalHost.NAME;
	}

	/**
	 * The one-line form for log lines and exception messages:
	 * {@code <application>@<instance> <owner description>}, with its control characters and line breaks escaped as
	 * {@link LogSafe} does (a thread's name is the application's text, not this library's).
	 */
	@Override
	public String toString() {
		String text = LogSafe.escape(this.application + "@" + this.instance + " " + this.ownerDescription);
		return (text != null) ? text : "";
	}

	/** The host's name, found once, when first asked for. */
	private static final class LocalHost {

		private static final long LOOKUP_MILLIS = 1_000;

		static final String NAME = find();

		private static String find() {
			String name = fromEnvironment("HOSTNAME");
			if (name == null) {
				name = fromEnvironment("COMPUTERNAME");
			}
			if (name == null) {
				name = fromKernel();
			}
			if (name == null) {
				name = lookUp();
			}
			return (name != null) ? name : UNKNOWN_HOST;
		}

		private static @Nullable String fromEnvironment(String variable) {
			try {
				String value = System.getenv(variable);
				return StringUtils.hasText(value) ? value.trim() : null;
			}
			catch (SecurityException ex) {
				return null;
			}
		}

		/** Linux's own record of the host name: a file read, no resolver. */
		private static @Nullable String fromKernel() {
			try {
				Path file = Path.of("/proc/sys/kernel/hostname");
				if (!Files.isReadable(file)) {
					return null;
				}
				String value = Files.readString(file);
				return StringUtils.hasText(value) ? value.trim() : null;
			}
			catch (IOException | RuntimeException ex) {
				return null;
			}
		}

		/** {@link InetAddress#getLocalHost()} may wait on a resolver: on a daemon thread, for a bounded time. */
		private static @Nullable String lookUp() {
			FutureTask<String> lookup = new FutureTask<>(() -> InetAddress.getLocalHost().getHostName());
			try {
				Thread thread = new Thread(lookup, "distlock-host-name");
				thread.setDaemon(true);
				thread.start();
				String name = lookup.get(LOOKUP_MILLIS, TimeUnit.MILLISECONDS);
				return StringUtils.hasText(name) ? name.trim() : null;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return null;
			}
			catch (ExecutionException | TimeoutException | RuntimeException ex) {
				lookup.cancel(true);
				return null;
			}
		}

	}

}
