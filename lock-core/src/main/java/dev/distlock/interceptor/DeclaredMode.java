package dev.distlock.interceptor;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockSettings;

/**
 * How a declaration's lock admits holders, from its {@code mode}, {@code fair} and {@code permits} attributes, which
 * overlap: {@code fair = true} is {@code mode = FAIR}, and {@code permits = N} is {@code mode = PERMITS} with N permits.
 * The combinations that cannot work fail the start here, naming the attribute, because a request would either refuse
 * them on every call or silently drop one of them.
 *
 * @param mode the lock mode of the operation's requests
 * @param permits the number of permits of a {@link LockMode#PERMITS} operation, 1 for the other modes
 */
record DeclaredMode(LockMode mode, int permits) {

	/**
	 * The mode and permits {@code annotation} declares.
	 * @param annotation the declaration
	 * @param holdAtLeast whether the declaration has a {@code holdAtLeast} window
	 * @param description the method, for messages
	 * @throws InvalidLockDeclarationException naming the attribute at fault
	 */
	static DeclaredMode of(DistributedLock annotation, boolean holdAtLeast, String description) {
		LockMode mode = annotation.mode();
		int permits = annotation.permits();
		if (permits != 0) {
			return permits(annotation, holdAtLeast, description);
		}
		if (mode == LockMode.PERMITS) {
			throw new InvalidLockDeclarationException(description, "permits", "@DistributedLock sets 'mode' = PERMITS "
					+ "but not 'permits': set permits = N (1 to " + LockSettings.MAX_PERMITS + "), how many callers "
					+ "hold the key at once, which makes the mode PERMITS by itself", null);
		}
		if (annotation.fair()) {
			if (mode.isReadWrite()) {
				throw new InvalidLockDeclarationException(description, "fair", "@DistributedLock sets 'fair' = true "
						+ "and 'mode' = " + mode + ": fair read-write locks are not supported; choose one", null);
			}
			return new DeclaredMode(LockMode.FAIR, 1);
		}
		return new DeclaredMode(mode, 1);
	}

	private static DeclaredMode permits(DistributedLock annotation, boolean holdAtLeast, String description) {
		int permits = annotation.permits();
		String declared = "@DistributedLock attribute 'permits' (" + permits + ")";
		if (permits < 0 || permits > LockSettings.MAX_PERMITS) {
			throw new InvalidLockDeclarationException(description, "permits", "@DistributedLock attribute 'permits' "
					+ "must be between 1 and " + LockSettings.MAX_PERMITS + " (or 0 for a lock, not a semaphore), but "
					+ "was " + permits, null);
		}
		if (annotation.fair()) {
			throw new InvalidLockDeclarationException(description, "permits", declared + " cannot be combined with "
					+ "'fair' = true: fair semaphores are not supported; choose one", null);
		}
		LockMode mode = annotation.mode();
		if (mode != LockMode.EXCLUSIVE && mode != LockMode.PERMITS) {
			throw new InvalidLockDeclarationException(description, "permits", declared + " cannot be combined with "
					+ "'mode' = " + mode + ": permits are a lock kind of their own, never a fair, read or write lock; "
					+ "choose one", null);
		}
		if (holdAtLeast) {
			// the window is one lease per key, taken by whichever holder runs first: the other permits would find it
			throw new InvalidLockDeclarationException(description, "permits", declared + " cannot be combined with "
					+ "'holdAtLeast': its window spaces the runs of the key, one per window, so the other permits "
					+ "would never be used; choose one (permits bound the concurrent callers, holdAtLeast the rate "
					+ "of runs)", null);
		}
		return new DeclaredMode(LockMode.PERMITS, permits);
	}

}
