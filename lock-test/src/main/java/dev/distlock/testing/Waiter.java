package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;

import org.jspecify.annotations.Nullable;

/**
 * One acquisition waiting for its key: a thread blocked in {@code tryAcquire}, or an asynchronous acquisition with its
 * future. Queued with its key in the store, in the order of arrival; the store hands it the key directly when the key
 * admits it (so no waiter can miss a release), or ends it at its deadline. Guarded by the store's monitor.
 * <p>
 * Invariant: {@code state} moves once, from WAITING to one of the others, and the waiter is in its key's queue exactly
 * while it is WAITING. A GRANTED waiter's lease is delivered to its caller or released, never both nor neither.
 */
final class Waiter {

	enum State {
		WAITING, GRANTED, TIMED_OUT, FAILED, ABANDONED
	}

	final Instance instance;

	final LockRequest request;

	final LockOwner owner;

	/** The owner id its lease will have, made when it first tried (as the Redis engine makes it per acquisition). */
	final String ownerId;

	/** For operators: the waiting thread's name, or the owner's when it is not a thread. */
	final String ownerThread;

	final Instant start;

	final Instant deadline;

	/** The future of an asynchronous acquisition, or null for a blocked thread. */
	final @Nullable CompletableFuture<Optional<Lease>> future;

	State state = State.WAITING;

	/** The lease the store granted, once GRANTED. */
	@Nullable LeaseEntry granted;

	@Nullable Instant grantedAt;

	/**
	 * Why it FAILED: the store did not answer when its wait ended ({@code LockUnavailableException}), or the key became
	 * a semaphore of another number of permits than it asks for ({@code IllegalStateException}).
	 */
	@Nullable RuntimeException failure;

	Waiter(Instance instance, LockRequest request, LockOwner owner, String ownerId, String ownerThread, Instant start,
			Instant deadline, @Nullable CompletableFuture<Optional<Lease>> future) {
		this.instance = instance;
		this.request = request;
		this.owner = owner;
		this.ownerId = ownerId;
		this.ownerThread = ownerThread;
		this.start = start;
		this.deadline = deadline;
		this.future = future;
	}

	String key() {
		return this.request.key();
	}

	LockMode mode() {
		return this.request.mode();
	}

	boolean isWaiting() {
		return this.state == State.WAITING;
	}

	/** Whether it still waits at {@code at}: its deadline is not before it (a waiter may be granted at its deadline). */
	boolean isAliveAt(Instant at) {
		return this.state == State.WAITING && !this.deadline.isBefore(at);
	}

	Duration waited(Instant until) {
		Duration waited = Duration.between(this.start, until);
		return waited.isNegative() ? Duration.ZERO : waited;
	}

	void grant(LeaseEntry entry, Instant at) {
		this.state = State.GRANTED;
		this.granted = entry;
		this.grantedAt = at;
	}

	@Override
	public String toString() {
		return "waiter for '" + key() + "' (" + mode() + ", " + this.owner + ", until " + this.deadline + ", " + this.state
				+ ")";
	}

}
