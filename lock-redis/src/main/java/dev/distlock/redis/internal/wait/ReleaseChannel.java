package dev.distlock.redis.internal.wait;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

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

	/** Where a channel's subscription stands. */
	enum ChannelState {

		NEW, SUBSCRIBING, SUBSCRIBED, DEAD

	}

}
