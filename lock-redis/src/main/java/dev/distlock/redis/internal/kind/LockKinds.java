package dev.distlock.redis.internal.kind;

import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.single.LockKind;

/**
 * The one place that maps a {@link LockMode} to its {@link LockKind}. The service hands {@link #of} to the engine, so
 * the engine below never names a concrete kind: a fifth kind is a new subclass here and its case below.
 */
public final class LockKinds {

	private LockKinds() {
	}

	/** {@return the kind of {@code request}: its mode's, and for a semaphore the kind of its number of permits} */
	public static LockKind of(LockRequest request) {
		return (request.mode() == LockMode.PERMITS) ? PermitKind.of(request.permits()) : of(request.mode());
	}

	/** {@return the kind of {@code mode}, of one permit for a semaphore} */
	public static LockKind of(LockMode mode) {
		return switch (mode) {
			case EXCLUSIVE -> ExclusiveKind.INSTANCE;
			case FAIR -> FairKind.INSTANCE;
			case READ -> ReadKind.INSTANCE;
			case WRITE -> WriteKind.INSTANCE;
			case PERMITS -> PermitKind.of(1);
		};
	}

}
