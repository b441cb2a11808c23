package dev.distlock.reactive;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Assumptions;

/**
 * What the tests of re-entry and loss need of the engine (issue 13's engine change: re-entry by {@link LockOwner},
 * {@link Lease#onLost}): asked of the engine itself, so that a branch without that change skips them, saying why.
 */
final class EngineSupport {

	private EngineSupport() {
	}

	static void assumeLossNotices(LockService service) {
		try (Lease lease = service.acquire(LockRequest.of("engine-support:loss", Duration.ofSeconds(5), Duration.ZERO))) {
			lease.onLost((event) -> {
			});
		}
		catch (UnsupportedOperationException ex) {
			Assumptions.abort("The engine does not tell holders of a loss (Lease.onLost): " + ex.getMessage());
		}
	}

	static void assumeReEntryByOwner(LockService service) {
		LockOwner owner = LockOwner.newOwner();
		LockRequest request = LockRequest.of("engine-support:owner", Duration.ofSeconds(5), Duration.ZERO);
		Optional<Lease> again;
		try (LockOwner.Binding binding = owner.bind(); Lease first = service.acquire(request)) {
			again = CompletableFuture.supplyAsync(() -> {
				try (LockOwner.Binding other = owner.bind()) {
					return service.tryAcquire(request);
				}
			}, (task) -> new Thread(task).start()).orTimeout(10, TimeUnit.SECONDS).join();
			again.ifPresent(Lease::release);
		}
		Assumptions.assumeTrue(again.isPresent(),
				"The engine re-enters by thread, not by LockOwner: its re-entry by owner is issue 13's engine change");
	}

}
