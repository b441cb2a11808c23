package dev.distlock.interceptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The leases of one {@link FutureLockInvocation} call, from acquisition to release: released at most once, then the
 * returned future completes.
 */
final class HeldLeases {

	private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

	/**
	 * Where the caller's future is completed when the engine completed the release or told of a loss on a thread of its
	 * own: {@code CompletableFuture}'s default asynchronous executor, as for its {@code *Async} methods.
	 */
	private static final Executor CALLER_STAGES = new CompletableFuture<Void>().defaultExecutor();

	private final LockOperation operation;

	private final List<Lease> leases;

	private final LostLeasePolicy lostLeasePolicy;

	private final AtomicBoolean released = new AtomicBoolean();

	/** The loss that failed the returned future early, if one did. */
	private final AtomicReference<@Nullable LockLostException> lost = new AtomicReference<>();

	/** Completed once the leases are released; the future the call returns. */
	private final CompletableFuture<Object> returned;

	private volatile @Nullable CompletionStage<?> source;

	/** Whether a lease was lost by its longest hold: the method's future is to be cancelled. */
	private volatile boolean maxHoldExceeded;

	HeldLeases(LockOperation operation, List<Lease> leases, LostLeasePolicy lostLeasePolicy) {
		this.operation = operation;
		this.leases = leases;
		this.lostLeasePolicy = lostLeasePolicy;
		this.returned = new CompletableFuture<>() {

			@Override
			public boolean cancel(boolean mayInterruptIfRunning) {
				boolean cancelled = super.cancel(mayInterruptIfRunning);
				if (cancelled) {
					cancelSource(mayInterruptIfRunning);
				}
				return cancelled;
			}

		};
	}

	/**
	 * Fail the returned future with {@link LockLostException} as soon as a lease is found lost, when the policy is
	 * to throw, and cancel the method's future when the loss is by the lease's longest hold
	 * ({@link LockLostEvent.Detection#MAX_HOLD_EXCEEDED}), whatever the policy; engines that cannot tell a holder of
	 * a loss report it at release instead.
	 */
	void watchForLoss() {
		if (this.lostLeasePolicy != LostLeasePolicy.THROW && this.operation.maxHold() == null) {
			return;
		}
		for (Lease lease : this.leases) {
			try {
				lease.onLost(this::lost);
			}
			catch (UnsupportedOperationException ex) {
				// reported by the release, which throws LockLostException for a lease found lost
			}
		}
	}

	private void lost(LockLostEvent event) {
		boolean maxHold = event.detection() == LockLostEvent.Detection.MAX_HOLD_EXCEEDED;
		if (maxHold) {
			this.maxHoldExceeded = true;
		}
		LockLostException failure = null;
		if (this.lostLeasePolicy == LostLeasePolicy.THROW) {
			LockLostException loss = new LockLostException(event);
			if (this.lost.compareAndSet(null, loss) && !this.returned.isDone()) {
				logger.warn(this.operation.description() + " lost its lock while its future was running: "
						+ loss.getMessage());
				failure = loss;
			}
		}
		if (failure == null && !maxHold) {
			return;
		}
		LockLostException early = failure;
		// not on the engine's thread that tells of the loss: the caller's dependent stages run where it completes.
		// One task, in this order: the caller sees the loss, not the cancellation it causes
		CALLER_STAGES.execute(() -> {
			if (early != null) {
				this.returned.completeExceptionally(early);
			}
			if (maxHold) {
				// the work is told: its future is cancelled (now, or as the method hands it over), which releases
				// the leases as its completion does
				cancelSource(true);
			}
		});
	}

	/** The method's future now owns the leases: release them when it completes. */
	CompletableFuture<Object> handOver(CompletionStage<?> stage) {
		this.source = stage;
		if (this.returned.isCancelled() || this.maxHoldExceeded) {
			cancelSource(true);
		}
		stage.whenComplete(this::finish);
		return this.returned;
	}

	private void cancelSource(boolean mayInterruptIfRunning) {
		CompletionStage<?> stage = this.source;
		if (stage instanceof Future<?> future) {
			future.cancel(mayInterruptIfRunning);
		}
		else if (stage != null) {
			try {
				stage.toCompletableFuture().cancel(mayInterruptIfRunning);
			}
			catch (UnsupportedOperationException ex) {
				// a stage that cannot be cancelled: the caller gave up on it, so the lock is released now
				finish(null, new CancellationException());
			}
		}
	}

	/** Release without blocking, then complete the returned future with the method's outcome. */
	private void finish(@Nullable Object value, @Nullable Throwable failure) {
		if (!this.released.compareAndSet(false, true)) {
			return;
		}
		List<Throwable> problems = new ArrayList<>();
		CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
		for (int i = this.leases.size() - 1; i >= 0; i--) {
			Lease lease = this.leases.get(i);
			chain = chain.thenCompose((ignored) -> releaseOne(lease, problems));
		}
		Thread finishing = Thread.currentThread();
		chain.whenComplete((ignored, unexpected) -> {
			if (unexpected != null) {
				problems.add(unwrap(unexpected));
			}
			if (Thread.currentThread() == finishing) {
				complete(value, failure, problems);
			}
			else {
				// the caller's dependent stages would run on the engine's release thread: not there
				CALLER_STAGES.execute(() -> complete(value, failure, problems));
			}
		});
	}

	/**
	 * One release, its failure collected rather than propagated, so the next lease is released as well. The
	 * releases run one after the other, so {@code problems} is never added to concurrently.
	 */
	private CompletableFuture<Void> releaseOne(Lease lease, List<Throwable> problems) {
		CompletableFuture<Void> release;
		try {
			release = lease.releaseAsync();
		}
		catch (RuntimeException ex) {
			release = CompletableFuture.failedFuture(ex);
		}
		return release.handle((ignored, ex) -> {
			if (ex != null) {
				Throwable cause = unwrap(ex);
				problems.add(cause);
				if (cause instanceof LockUnavailableException unavailable) {
					logger.warn(this.operation.description() + ": could not release lock '"
							+ LogSafe.escape(unavailable.getKey())
							+ "'; it expires at the end of its lease time", unavailable);
				}
			}
			return null;
		});
	}

	/**
	 * As the synchronous path does: problems are attached to the method's failure; otherwise a lost lease fails
	 * the call or is logged, by the {@link LostLeasePolicy}, and an unreachable store is logged only.
	 */
	private void complete(@Nullable Object value, @Nullable Throwable failure, List<Throwable> problems) {
		if (failure != null) {
			Throwable cause = unwrap(failure);
			LockLostException early = this.lost.get();
			if (early != null && early != cause) {
				cause.addSuppressed(early);
			}
			for (Throwable problem : problems) {
				if (problem != cause && problem != early) {
					cause.addSuppressed(problem);
				}
			}
			this.returned.completeExceptionally(cause);
			return;
		}
		LockLostException early = this.lost.get();
		if (early != null) {
			// told of while the future ran (the policy is THROW then): it wins over the outcome of the lost run
			problems.stream().filter((problem) -> problem != early).forEach(early::addSuppressed);
			this.returned.completeExceptionally(early);
			return;
		}
		LockLostException lostAtRelease = null;
		Throwable other = null;
		for (Throwable problem : problems) {
			if (problem instanceof LockLostException ex) {
				if (lostAtRelease == null) {
					lostAtRelease = ex;
				}
				else {
					lostAtRelease.addSuppressed(ex);
				}
			}
			else if (!(problem instanceof LockUnavailableException)) {
				// a lease no longer ours without a known loss, or a bug: it fails the call, as it would throw
				if (other == null) {
					other = problem;
				}
				else {
					other.addSuppressed(problem);
				}
			}
		}
		if (other != null) {
			if (lostAtRelease != null) {
				other.addSuppressed(lostAtRelease);
			}
			this.returned.completeExceptionally(other);
			return;
		}
		if (lostAtRelease != null) {
			if (this.lostLeasePolicy == LostLeasePolicy.THROW) {
				this.returned.completeExceptionally(lostAtRelease);
				return;
			}
			logger.warn(this.operation.description() + " ran without exclusive access: " + lostAtRelease.getMessage());
		}
		this.returned.complete(value);
	}

	/**
	 * Release on the calling thread, before the method ran or because its body threw: problems are attached to
	 * {@code failure}; without one (the body returned no future) as {@link #complete} would report them.
	 */
	void releaseNow(@Nullable Throwable failure) {
		if (!this.released.compareAndSet(false, true)) {
			return;
		}
		List<Throwable> problems = new ArrayList<>();
		for (int i = this.leases.size() - 1; i >= 0; i--) {
			try {
				this.leases.get(i).release();
			}
			catch (RuntimeException ex) {
				problems.add(ex);
				if (ex instanceof LockUnavailableException unavailable) {
					logger.warn(this.operation.description() + ": could not release lock '"
							+ LogSafe.escape(unavailable.getKey())
							+ "'; it expires at the end of its lease time", unavailable);
				}
			}
		}
		if (failure != null) {
			problems.forEach(failure::addSuppressed);
			return;
		}
		complete(null, null, problems);
		if (this.returned.isCompletedExceptionally()) {
			try {
				this.returned.join();
			}
			catch (CompletionException ex) {
				if (ex.getCause() instanceof RuntimeException runtime) {
					throw runtime;
				}
				throw ex;
			}
		}
	}

	/** The cause a completion stage wraps, or {@code failure} itself. */
	static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

}
