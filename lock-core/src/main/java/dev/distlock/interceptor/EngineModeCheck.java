package dev.distlock.interceptor;

import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockService;

/**
 * The startup check of the declared lock modes against the lock service: a declaration of a mode the service refuses
 * for every request ({@link LockService#modeRefusal}: fair, read-write or permits on Redlock, say) fails the start,
 * naming the method and the service's reason, instead of every call of the method failing in production. The check
 * runs once every singleton exists, when the service can be asked; with no service (locks disabled) there is nothing
 * to check.
 */
final class EngineModeCheck {

	private EngineModeCheck() {
	}

	/**
	 * Fail on the first operation parsed so far whose mode {@code lockService} refuses.
	 * @throws InvalidLockDeclarationException naming the method, the attribute ({@code mode}) and the reason
	 */
	static void refuseModesTheServiceRefuses(LockOperationSource operationSource, Supplier<LockService> lockService) {
		LockService service = LeaseTimeCheck.service(lockService);
		if (service == null) {
			return;
		}
		for (LockOperation operation : operationSource.operations()) {
			LockMode mode = operation.mode();
			Optional<String> refusal = service.modeRefusal(mode);
			if (refusal.isPresent()) {
				throw new InvalidLockDeclarationException(operation.description(), "mode", "@DistributedLock asks for "
						+ ((mode == LockMode.PERMITS) ? "permits" : "a " + mode.name().toLowerCase(Locale.ROOT) + " lock")
						+ ", which the lock service refuses: " + refusal.get(), null);
			}
		}
	}

}
