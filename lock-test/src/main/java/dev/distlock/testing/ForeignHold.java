package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;

/**
 * A key held by an instance the test does not run, made by {@link InMemoryLockStore#holdElsewhere(String)} or
 * {@link InMemoryLockStore#holdElsewhere(String, Duration)}: the application's instances see an exclusive lease held by
 * another owner, with its own fencing token, until the test {@linkplain #release() releases} it or its time runs out.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class ForeignHold {

	/** The client id that foreign holds carry in the store and the history. */
	static final String INSTANCE = "elsewhere";

	private final InMemoryLockStore store;

	private final StoreHold hold;

	/** Whether its instance renews it until it is released, rather than let it expire at its lease time. */
	private final boolean renewed;

	private final Duration ttl;

	ForeignHold(InMemoryLockStore store, StoreHold hold, boolean renewed, Duration ttl) {
		this.store = store;
		this.hold = hold;
		this.renewed = renewed;
		this.ttl = ttl;
	}

	/** {@return the lock key} */
	public String key() {
		return this.hold.key;
	}

	/** {@return the owner id in the store, {@code elsewhere:<number>}} */
	public String owner() {
		return this.hold.owner;
	}

	/** {@return the fencing token of this hold: greater than every earlier holder's of the key} */
	public long fencingToken() {
		return this.hold.token;
	}

	/** {@return whether the store still has it: not released, not expired, not forced out or lost} */
	public boolean isHeld() {
		return this.store.call((effects) -> !this.hold.gone);
	}

	/**
	 * Release it, handing the key to whoever waits for it.
	 * @return whether it was still held (false when it had expired or was forced out already)
	 */
	public boolean release() {
		return this.store.releaseForeign(this.hold);
	}

	/** The test starts afresh: release it if it is still held (the store's monitor is held). */
	void end(Effects effects) {
		this.store.releaseForeign(this.hold, effects);
	}

	/**
	 * Its instance renews it, as a live instance's watchdog would, so that its time never runs out while it is held;
	 * returns whether it is still held (the store's monitor is held).
	 */
	boolean renew(Instant now) {
		if (this.renewed && !this.hold.gone) {
			Instant renewedUntil = Instants.plus(now, this.ttl);
			if (renewedUntil.isAfter(this.hold.deadline)) {
				this.hold.deadline = renewedUntil;
			}
		}
		return !this.hold.gone;
	}

	@Override
	public String toString() {
		return "ForeignHold[key=" + key() + ", owner=" + owner() + ", token=" + fencingToken()
				+ (this.renewed ? ", renewed" : ", lease " + this.ttl) + "]";
	}

}
