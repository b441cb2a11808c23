package dev.distlock.testing;

import java.util.concurrent.TimeoutException;

import dev.distlock.core.LockUnavailableException;

/**
 * Whether the store answers: the test's {@link InMemoryLockStore#makeUnreachable()} and
 * {@link InMemoryLockStore#failNextCalls(int)}. Guarded by the store's monitor.
 * <p>
 * A <em>call</em> is what the application's code asks of the store through the lock API: an acquisition attempt (a
 * re-entry included), a release, an extension or renewal by the holder, an ownership check, a holder query, a forced
 * release. Unreachable, the store fails every call and the watchdog's renewals too; {@code failNextCalls(n)} fails the
 * next {@code n} calls only, never a renewal (whose timing the test does not decide on the system clock).
 */
final class Outage {

	/** The outcome of one call. */
	enum Call {

		/** The store answers. */
		ANSWERED,

		/** One of the calls the test made fail: a retry may be answered. */
		FAILED_ONCE,

		/** The store is unreachable until the test makes it reachable again. */
		UNREACHABLE

	}

	private boolean unreachable;

	private int failingCalls;

	/** Whether the store answers the watchdog's renewals and hands keys to waiters. */
	boolean isReachable() {
		return !this.unreachable;
	}

	/** Make a call: whether the store answers it (a failing call is counted). */
	Call call() {
		if (this.unreachable) {
			return Call.UNREACHABLE;
		}
		if (this.failingCalls > 0) {
			this.failingCalls--;
			return Call.FAILED_ONCE;
		}
		return Call.ANSWERED;
	}

	void unreachable(boolean unreachable) {
		this.unreachable = unreachable;
	}

	void failNext(int calls) {
		this.failingCalls = calls;
	}

	/**
	 * The exception of a call that got no answer, as the Redis engine words it: {@code Could not <action> lock '<key>':
	 * the store did not answer}.
	 */
	static LockUnavailableException failure(String key, String action, Call call, String note) {
		String why = (call == Call.UNREACHABLE) ? "the in-memory store is unreachable (InMemoryLockStore.makeUnreachable())"
				: "the in-memory store failed the call as told (InMemoryLockStore.failNextCalls(int))";
		return new LockUnavailableException(key, "Could not " + action + " lock '" + key + "': the store did not answer"
				+ note + " (" + why + ")", new TimeoutException(why));
	}

	/** The exception of an acquisition whose last attempt got no answer when its wait ended. */
	static LockUnavailableException unansweredWithin(String key, java.time.Duration wait, Call call) {
		LockUnavailableException last = failure(key, "acquire", call, "");
		return new LockUnavailableException(key, last.getMessage().replace("Could not acquire lock '" + key + "': ",
				"Could not acquire lock '" + key + "' within " + wait + ": "), last.getCause());
	}

}
