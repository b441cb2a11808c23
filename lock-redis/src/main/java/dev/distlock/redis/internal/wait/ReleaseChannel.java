package dev.distlock.redis.internal.wait;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * One release channel and its local waiters: the state that {@link ReleaseSubscriber} (who waits, whom a release
 * wakes) and {@link ChannelSubscriptions} (whether the channel is subscribed on the connection) share. All mutable
 * state guarded by {@code this}.
 */
final class ReleaseChannel {

	private static final int MAX_OWN_RELEASES = 16;

	final String name;

	final byte[] raw;

	final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

	ChannelState state = ChannelState.NEW;

	CompletableFuture<Void> subscribed = new CompletableFuture<>();

	long idleSinceNanos = System.nanoTime();

	/** When the last SUBSCRIBE for this channel was sent. */
	long subscribeSentNanos;

	/** How long after {@link #subscribeSentNanos} an unconfirmed subscription is sent again. */
	long resubscribeNanos = ChannelSubscriptions.MIN_RESUBSCRIBE_NANOS;

	/** See {@link ReleaseSubscriber#yieldUntil}; 0 when not yielding. */
	long yieldUntilNanos;

	/**
	 * The notes of other waiting processes that the last release naming this process carried over
	 * ({@link ReleaseMessage#carried}), for the next attempt to write into the lease it takes ({@link #takeCarried});
	 * '' when there are none. Only the latest release's count: any other release message replaces them (with '' when
	 * it names another process or nobody: the lease they were read from is gone, and the next one has notes of its own).
	 */
	private String carried = "";

	/**
	 * Tokens of leases this process released on this channel whose message has not come yet (its wake-up was given
	 * directly). Bounded: the message of a release can come before the releasing thread records it, or never (a
	 * dropped subscription), and then its token stays until pushed out.
	 */
	private final ArrayDeque<String> ownReleases = new ArrayDeque<>(4);

	ReleaseChannel(String name) {
		this.name = name;
		this.raw = name.getBytes(StandardCharsets.UTF_8);
	}

	void expectOwnMessage(String token) {
		if (this.ownReleases.size() == MAX_OWN_RELEASES) {
			this.ownReleases.removeFirst();
		}
		this.ownReleases.addLast(token);
	}

	/** Whether the message with this token is the message of a release by this process (and forget it). */
	boolean ownMessageArrived(String token) {
		return this.ownReleases.remove(token);
	}

	/** See {@link ReleaseSubscriber#fairHandedOver}; the caller holds this channel's monitor. */
	void fairHandedOver(String owner, long token) {
		for (Waiter waiter : this.waiters) {
			if (waiter.owner.equals(owner)) {
				waiter.fairHandedOver(token);
				return;
			}
		}
	}

	/** See {@link ReleaseSubscriber#reserveForHandOver}; the caller holds this channel's monitor. */
	@Nullable Waiter reserveForHandOver(String owner) {
		for (Waiter waiter : this.waiters) {
			if (!waiter.owner.equals(owner) && waiter.reserve()) {
				return waiter;
			}
		}
		return null;
	}

	/** See {@link ReleaseSubscriber#hasHandOverTaker}; the caller holds this channel's monitor. */
	boolean hasHandOverTaker() {
		for (Waiter waiter : this.waiters) {
			if (waiter.takesHandOvers()) {
				return true;
			}
		}
		return false;
	}

	/** Wake the longest waiting waiter that is not awake already; returns whether there was one. */
	boolean wakeOne() {
		for (Waiter waiter : this.waiters) {
			if (!waiter.signalled) {
				waiter.signal();
				return true;
			}
		}
		return false;
	}

	/**
	 * A release {@code message} came (see {@link ReleaseSubscriber#message}): nothing if it is this process's own
	 * release (its wake-up was given), every waiter for a lock that may admit several, else one waiter, who tries at
	 * once when the message names {@code clientId} (this process) or nobody, and after {@code holdBackNanos} when it
	 * names another process. A later hold-back never shortens an earlier one, and being named ends any. A message
	 * naming this process leaves its carried notes for the woken waiter's attempt ({@link #takeCarried}).
	 */
	void released(ReleaseMessage message, String clientId, long holdBackNanos) {
		if (ownMessageArrived(message.token())) {
			return;
		}
		if (message.kind() == ReleaseMessage.Kind.WAKE_ALL) {
			this.waiters.forEach(Waiter::signal); // a read-write lock may admit every waiting reader
			return;
		}
		boolean named = !clientId.isEmpty() && message.party().equals(clientId);
		if (named || message.party().isEmpty() || clientId.isEmpty()) {
			this.yieldUntilNanos = 0;
		}
		else {
			long until = System.nanoTime() + holdBackNanos;
			if (this.yieldUntilNanos == 0 || until - this.yieldUntilNanos > 0) {
				this.yieldUntilNanos = until;
			}
		}
		// with nobody waiting here, nobody here takes the lock and passes the notes on
		this.carried = (named && !this.waiters.isEmpty()) ? message.carried() : "";
		wakeOne();
	}

	/** {@return the carried notes ({@link #carried}), once: the next call answers '' unless a release came between} */
	String takeCarried() {
		String notes = this.carried;
		this.carried = "";
		return notes;
	}

	/** How long the longest waiting waiter has waited, in ms; 0 when none waits. */
	long waitedMillis() {
		Waiter first = this.waiters.peekFirst();
		return (first == null) ? 0 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - first.sinceNanos);
	}

	/** Where a channel's subscription stands. */
	enum ChannelState {

		NEW, SUBSCRIBING, SUBSCRIBED, DEAD

	}

}
