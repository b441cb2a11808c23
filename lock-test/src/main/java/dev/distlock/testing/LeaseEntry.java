package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;

import org.jspecify.annotations.Nullable;

/**
 * What an instance knows about one lease it holds: one per acquisition, shared by the handles of its re-entries, and
 * the unit its watchdog renews; the engine-side twin of the Redis engine's {@code LeaseEntry}. Its {@link StoreHold}
 * is what the store has; the two can part (the store may drop the hold while the instance still believes it holds
 * it, until its watchdog or its holder asks), as the Redis engine's picture and Redis can.
 * <p>
 * Invariants (all state guarded by the store's monitor): {@code state} only moves forward, HELD to RELEASED, LOST or
 * EXPIRED, never back; only a HELD, auto-renewed entry of an open instance is renewed; {@code validUntil} never
 * overstates the lease (it is the store's deadline as last confirmed); a loss is recorded once, and the
 * {@code onLost} actions registered before it run once, those of holds released before it never. A renewed lease with
 * a longest hold is renewed only before {@code maxHoldUntil} and lost at it ({@code MAX_HOLD_EXCEEDED}); its hold
 * stays in the store until its deadline or the holder's release, as the Redis engine leaves the key.
 */
final class LeaseEntry {

	enum State {
		HELD, RELEASED, LOST, EXPIRED
	}

	final Instance instance;

	final StoreHold hold;

	final String key;

	final String name;

	final String owner;

	final String ownerThread;

	/** Who holds it, for log lines, messages and {@link dev.distlock.core.Lease#holder()}. */
	final HolderLabel holder;

	/** Whose lease this is for re-entry. */
	final LockOwner lockOwner;

	final LockMode mode;

	/** The number of permits its acquisition asked for: 1 unless {@code mode} is {@link LockMode#PERMITS}. */
	final int permits;

	final long token;

	final Instant acquiredAt;

	State state = State.HELD;

	int holds = 1;

	/** The lease time the watchdog renews to; a re-entry may widen it, a replacing extension sets it. */
	Duration ttl;

	boolean autoRenew;

	Instant validUntil;

	@Nullable Instant lastRenewal;

	/** When the watchdog renews it next (auto-renewed only). */
	Instant nextRenewal;

	/** When its renewals started failing (the store unreachable), or null. */
	@Nullable Instant failingSince;

	@Nullable String lastRenewalError;

	@Nullable LockLostEvent lostEvent;

	/** When the longest hold of the lease ends (its first acquisition plus {@code maxHold}), or null for none. */
	final @Nullable Instant maxHoldUntil;

	/** The {@code onLost} actions of its holds, until the loss takes them; null once taken. */
	private @Nullable List<LostAction> lostActions = new ArrayList<>(1);

	LeaseEntry(Instance instance, StoreHold hold, String name, LockOwner lockOwner, String ownerThread,
			HolderLabel holder, Duration ttl, boolean autoRenew, Instant now, @Nullable Duration maxHold, int permits) {
		this.permits = permits;
		this.maxHoldUntil = (maxHold != null) ? Instants.plus(now, maxHold) : null;
		this.instance = instance;
		this.hold = hold;
		this.key = hold.key;
		this.owner = hold.owner;
		this.mode = hold.mode;
		this.token = hold.token;
		this.name = name;
		this.lockOwner = lockOwner;
		this.ownerThread = ownerThread;
		this.holder = holder;
		this.ttl = ttl;
		this.autoRenew = autoRenew;
		this.acquiredAt = now;
		this.validUntil = hold.deadline;
		this.nextRenewal = Instants.plus(now, instance.renewalInterval(ttl));
	}

	boolean isHeld(Instant now) {
		return this.state == State.HELD && now.isBefore(this.validUntil);
	}

	/** Whether this renewed lease has been held for its longest hold at {@code now}. */
	boolean isMaxHoldReached(Instant now) {
		return this.state == State.HELD && this.autoRenew && this.maxHoldUntil != null
				&& !now.isBefore(this.maxHoldUntil);
	}

	boolean isRenewable() {
		return this.state == State.HELD && this.autoRenew && !this.instance.closed && this.hold.renewer == this;
	}

	/** Record a loss unless the lease already ended; returns the event to announce, or null. */
	@Nullable LockLostEvent markLost(LockLostEvent.Detection detection, Instant at) {
		if (this.state != State.HELD) {
			return null;
		}
		this.state = State.LOST;
		this.lostEvent = new LockLostEvent(this.key, this.name, this.owner, this.token, detection, at, this.holder);
		return this.lostEvent;
	}

	/**
	 * The holder found the lease gone from the store: record the loss whatever the state (a fixed lease may have
	 * expired already, which names the detection). Returns the new event, or null if a loss was recorded before.
	 */
	@Nullable LockLostEvent markLostByHolder(Instant at) {
		if (this.lostEvent != null) {
			return null;
		}
		LockLostEvent.Detection detection = (this.state == State.EXPIRED) ? LockLostEvent.Detection.EXPIRED
				: LockLostEvent.Detection.FOUND_GONE_BY_HOLDER;
		this.state = State.LOST;
		this.lostEvent = new LockLostEvent(this.key, this.name, this.owner, this.token, detection, at, this.holder);
		return this.lostEvent;
	}

	/** One hold was released; returns true when it was the last, which ends the entry. */
	boolean releaseHold() {
		this.holds = Math.max(0, this.holds - 1);
		if (this.holds > 0) {
			return false;
		}
		if (this.state == State.HELD) {
			this.state = State.RELEASED;
		}
		return true;
	}

	/** Keep {@code action} for the loss of {@code handle}'s lease; returns false when the loss took the actions. */
	boolean addLostAction(Object handle, Consumer<LockLostEvent> action) {
		if (this.lostActions == null) {
			return false;
		}
		this.lostActions.add(new LostAction(handle, action));
		return true;
	}

	/** {@code handle} was released: its actions never run. */
	void dropLostActions(Object handle) {
		if (this.lostActions != null) {
			this.lostActions.removeIf((registered) -> registered.handle == handle);
		}
	}

	/** The lease was lost: take the actions to run (none the second time). */
	List<Consumer<LockLostEvent>> takeLostActions() {
		List<LostAction> taken = this.lostActions;
		this.lostActions = null;
		return (taken != null) ? taken.stream().map(LostAction::action).toList() : List.of();
	}

	LeaseSnapshot snapshot(Instant now) {
		Duration remaining = (this.state == State.LOST || !now.isBefore(this.validUntil)) ? Duration.ZERO
				: Duration.between(now, this.validUntil);
		return new LeaseSnapshot(this.key, this.name, this.owner, this.ownerThread, this.acquiredAt, this.holds,
				this.ttl, remaining, this.lastRenewal, this.token, this.autoRenew, this.state == State.LOST, this.mode);
	}

	@Override
	public String toString() {
		return "lease '" + this.key + "' (held by " + this.holder + ", token " + this.token + ", " + this.state + ")";
	}

	private record LostAction(Object handle, Consumer<LockLostEvent> action) {
	}

}
