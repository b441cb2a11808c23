package dev.distlock.sample.inventory;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.testcontainers.DockerClientFactory;

/**
 * Whether Testcontainers can use Docker here, decided within a short time. {@code disabledWithoutDocker} alone waits
 * for minutes where a Docker daemon runs but cannot pull images (no registry access): it retries the pull of its
 * helper image before giving up. Such a machine skips the container tests quickly instead.
 */
public final class DockerAvailability {

	private static final Duration LIMIT = Duration.ofSeconds(20);

	private static Boolean available;

	private DockerAvailability() {
	}

	/** For {@code @EnabledIf("dev.distlock.sample.inventory.DockerAvailability#isAvailable")}. */
	public static synchronized boolean isAvailable() {
		if (available == null) {
			FutureTask<Boolean> check = new FutureTask<>(() -> DockerClientFactory.instance().isDockerAvailable());
			Thread thread = new Thread(check, "docker-availability");
			thread.setDaemon(true);
			thread.start();
			try {
				available = check.get(LIMIT.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (TimeoutException | ExecutionException ex) {
				available = false;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				available = false;
			}
		}
		return available;
	}

}
