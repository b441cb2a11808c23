package dev.distlock.redis.internal.wait;

import java.util.concurrent.CompletableFuture;

import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Validate;
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;
import org.junit.jupiter.api.Test;

/**
 * The hand-over protocol between a holder and a waiting thread of one process, model-checked with Lincheck: every
 * interleaving of a holder's hand-over (reserve, then grant or revert after its Redis call) with the waiter's
 * attempts and its leaving must keep a granted lease with the waiter that takes it. The bug this rules out is a
 * lease handed to nobody: a waiter that leaves (or starts an attempt of its own) while a hand-over to it is under way,
 * and a holder that then grants it the lease in Redis. {@link WaiterTests} replays the known races one by one; this
 * explores all interleavings of short scenarios (one holder thread, one waiter thread, as in the engine, where a
 * channel's waiters are reserved under the channel's lock and each waiter is its own thread).
 */
public class WaiterModelCheckTests { // public, with a public constructor: Lincheck instantiates it

	private final Waiter waiter = new Waiter(new ReleaseChannel("lock:{k}:released"), Thread.currentThread(),
			CompletableFuture.completedFuture(null), "client:1:1", "k", 1000, "");

	/** Whether a holder granted the waiter the lease (written by the holder thread, read after both ended). */
	private boolean granted;

	/** How many times the waiter took a lease handed to it. */
	private int taken;

	/** Whether the waiter left without a lease. */
	private boolean leftEmpty;

	/** Whether the waiter is done (took a lease or left): a real waiter stops calling then. */
	private boolean done;

	/** A holder's hand-over to the waiter that Redis agrees to: reserve it, then grant it the lease. */
	@Operation(nonParallelGroup = "holder")
	public void handOver() {
		if (this.waiter.reserve()) {
			this.waiter.grant(42, 1, 1);
			this.granted = true;
		}
	}

	/** A holder's hand-over that Redis refuses (the lease was not the holder's any more): reserve, then revert. */
	@Operation(nonParallelGroup = "holder")
	public void handOverRefused() {
		if (this.waiter.reserve()) {
			this.waiter.revert();
		}
	}

	/**
	 * The waiter's own attempt (its Redis call, which does not acquire here, happens between start and end), or, if a
	 * hand-over is under way or done, waiting it out and taking the lease if it was granted.
	 */
	@Operation(nonParallelGroup = "waiter")
	public void attempt() {
		if (this.done) {
			return;
		}
		if (this.waiter.startAttempt()) {
			this.waiter.endAttempt();
			return;
		}
		if (this.waiter.handedOver()) {
			this.taken++;
			this.done = true;
		}
	}

	/** The waiter stops waiting (its deadline passed, or it was interrupted), taking a lease handed to it first. */
	@Operation(nonParallelGroup = "waiter")
	public void leave() {
		if (this.done) {
			return;
		}
		this.done = true;
		if (this.waiter.leave()) {
			this.taken++;
		}
		else {
			this.leftEmpty = true;
		}
	}

	/**
	 * The invariant: a lease granted in Redis always has a thread that takes it, and only a granted one is taken. (The
	 * operations return nothing, so every history is linearizable: this check, and Lincheck's detection of a thread
	 * spinning forever, are what can fail.)
	 */
	@Validate
	public void aGrantedLeaseIsTakenByItsWaiterAndNothingElseIs() {
		if (this.granted && this.leftEmpty) {
			throw new IllegalStateException("the lease was handed to a waiter that left without it");
		}
		if (this.taken > (this.granted ? 1 : 0)) {
			throw new IllegalStateException("the waiter took " + this.taken + " lease(s), granted: " + this.granted);
		}
	}

	/**
	 * 12 scenarios of 500 interleavings each in the default build (about 40 s on a loaded 2-core machine); the longer
	 * search of 30 or more with {@code -Ddistlock.model-check.iterations=30}.
	 */
	@Test
	void noInterleavingOfHandOverAttemptAndLeaveLosesAHandedLease() {
		ModelCheckingOptions options = new ModelCheckingOptions()
			.iterations(Integer.getInteger("distlock.model-check.iterations", 12))
			.invocationsPerIteration(500)
			.threads(2)
			.actorsPerThread(3)
			.actorsBefore(1)
			.actorsAfter(1);
		LinChecker.check(WaiterModelCheckTests.class, options);
	}

}
