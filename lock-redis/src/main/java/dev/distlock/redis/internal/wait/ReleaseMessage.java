package dev.distlock.redis.internal.wait;

import java.util.regex.Pattern;

import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;

/**
 * What a message on a release channel says, read once by {@link ReleaseSubscriber#message}: the three formats the
 * scripts publish, and anything else (a forced release's stamp, an older version's plain token) read as a release
 * that names nobody, so that a message this version does not know still wakes a waiter.
 * @param kind which of the formats it is
 * @param token what identifies the release for {@link ReleaseChannel#ownMessageArrived}: the released lease's token
 * (without the named process), or the whole body of a message that wakes every waiter
 * @param party the client id a {@link Kind#RELEASED} message names as the longest waiting process
 * ({@link LockScripts#NAMED_SEPARATOR}), '' when it names none; the new owner of a {@link Kind#FAIR_HAND_OVER}
 * @param handedToken the new token of a {@link Kind#FAIR_HAND_OVER}, else 0
 * @param carried the notes of the other waiting processes that a {@link Kind#RELEASED} message naming a process
 * carries over to it ({@code <client id>=<since>,...}, oldest first, see {@link LockScripts#RELEASE}), as the acquire
 * script takes them back; '' when there are none, or when they are not in that form (never passed on to Redis then)
 */
record ReleaseMessage(Kind kind, String token, String party, long handedToken, String carried) {

	/** What {@link #carried} must look like to be passed on: what the scripts write, and no separator in a client id. */
	private static final Pattern CARRIED = Pattern.compile("[^,=>]+=[0-9]{1,18}(,[^,=>]+=[0-9]{1,18})*");

	/** A message that carries no notes. */
	ReleaseMessage(Kind kind, String token, String party, long handedToken) {
		this(kind, token, party, handedToken, "");
	}

	/** Which kind of release a message announces. */
	enum Kind {

		/** A fair release handed the lease to {@code party}: only that waiter is told. */
		FAIR_HAND_OVER,

		/** A read-write or semaphore release (or a forced release of one): every waiter of the process may enter. */
		WAKE_ALL,

		/** An exclusive release (or one this version does not know): wakes one waiter of each process. */
		RELEASED

	}

	static ReleaseMessage parse(String body) {
		if (body.startsWith(FairScripts.HAND_OVER_PREFIX)) {
			int colon = body.indexOf(':', FairScripts.HAND_OVER_PREFIX.length());
			if (colon > 0) {
				try {
					long token = Long.parseLong(body.substring(FairScripts.HAND_OVER_PREFIX.length(), colon));
					return new ReleaseMessage(Kind.FAIR_HAND_OVER, body, body.substring(colon + 1), token);
				}
				catch (NumberFormatException ex) {
					// not a hand-over of ours: treat it as any release
				}
			}
		}
		if (body.startsWith(ReadWriteScripts.WAKE_ALL)) {
			return new ReleaseMessage(Kind.WAKE_ALL, body, "", 0);
		}
		int separator = body.indexOf(LockScripts.NAMED_SEPARATOR);
		if (separator > 0) {
			String token = body.substring(0, separator);
			String named = body.substring(separator + LockScripts.NAMED_SEPARATOR.length());
			int second = named.indexOf(LockScripts.NAMED_SEPARATOR);
			if (second < 0) {
				return new ReleaseMessage(Kind.RELEASED, token, named, 0);
			}
			String carried = named.substring(second + LockScripts.NAMED_SEPARATOR.length());
			return new ReleaseMessage(Kind.RELEASED, token, named.substring(0, second), 0,
					CARRIED.matcher(carried).matches() ? carried : "");
		}
		return new ReleaseMessage(Kind.RELEASED, body, "", 0);
	}

}
