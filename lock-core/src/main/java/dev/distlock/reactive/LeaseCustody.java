package dev.distlock.reactive;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.core.Lease;
import org.jspecify.annotations.Nullable;

/**
 * The leases the engine granted to one subscription, from the grant until someone answers for their release. Reactor
 * may drop a value that meets a cancellation (a {@code MonoSink} emitting as its subscriber leaves), and a cancellation
 * may reach the acquisition while its last lease is on the way to the work: neither the operator that emits the lease
 * nor the one that receives it can tell alone who releases it, so this object decides.
 * <p>
 * Invariant: each lease granted for the subscription is released exactly once and never left held. While in custody
 * it is released by whoever ends the custody: the work that {@linkplain #claim() claimed} it (when it completes, fails
 * or is cancelled) or, when nobody claimed it, the cancellation or failure that {@linkplain #abandon() abandons} it.
 * A lease granted after the custody ended is refused ({@link #admit} is false) and released by the grant itself.
 * Claiming and abandoning exclude each other: the work never runs on leases a cancellation is releasing, and a
 * cancellation never releases leases the work holds (nor releases a lease twice, which would undo a re-entry's hold).
 */
final class LeaseCustody {

	private final List<Lease> leases = new ArrayList<>(1);

	private boolean claimed;

	private boolean ended;

	/**
	 * Take a lease the engine granted into custody.
	 * @param lease the granted lease
	 * @return false when the custody was abandoned or claimed already: the caller releases the lease
	 */
	synchronized boolean admit(Lease lease) {
		if (this.ended || this.claimed) {
			return false;
		}
		this.leases.add(lease);
		return true;
	}

	/**
	 * The work takes the leases: from now on only {@link #end()}, called when the work ends, releases them.
	 * @return the leases in order of grant, or null when the custody was abandoned (the work must not run)
	 */
	synchronized @Nullable List<Lease> claim() {
		if (this.ended) {
			return null;
		}
		this.claimed = true;
		return List.copyOf(this.leases);
	}

	/**
	 * The subscriber left, or an acquisition failed, before the work claimed the leases.
	 * @return the leases to release now: all of them, or none once claimed or ended
	 */
	synchronized List<Lease> abandon() {
		return this.claimed ? List.of() : end();
	}

	/**
	 * End the custody, whoever holds it.
	 * @return the leases to release now, in order of grant; none the second time
	 */
	synchronized List<Lease> end() {
		if (this.ended) {
			return List.of();
		}
		this.ended = true;
		List<Lease> released = List.copyOf(this.leases);
		this.leases.clear();
		return released;
	}

}
