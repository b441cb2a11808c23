package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.distlock.annotation.LockContext;
import dev.distlock.annotation.LockFailure;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockException;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.observability.DefaultLockCallObservationConvention;
import dev.distlock.observability.LockCallContext;
import dev.distlock.observability.LockCallObservationConvention;
import dev.distlock.observability.LockObservationDocumentation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.ResolvableType;
import org.springframework.util.Assert;

/**
 * One call of a {@link dev.distlock.annotation.DistributedLock @DistributedLock} method that returns a
 * {@link CompletableFuture} or {@link CompletionStage} (Spring's {@code @Async} methods included): the lock is held
 * until the returned future completes, not until the method returns.
 * <p>
 * The calling thread acquires every key (as for a synchronous method, waiting at most the declaration's wait) for a
 * {@linkplain LockOwner#newOwner() fresh owner}, or for the owner already bound to the thread when the call is nested
 * in another such call, so that it re-enters that call's leases; through {@link AsyncLockService} with that owner
 * when the service is one, else through the blocking {@link LockService} with the owner bound. The method body runs
 * with the owner bound and the leases in {@link LockContext}; after it returned its future the leases belong to that
 * future: they are released (in reverse order, without blocking) when it completes, normally, exceptionally or by
 * cancellation, and the future this call returns completes only after the release, with the method's outcome.
 * <p>
 * Failures reach the caller through the returned future, never as a thrown exception, except what the method body
 * itself throws before returning a future (it propagates as from a synchronous method, after the release): a key not
 * acquired in time is a failed future ({@code onFailure = THROW}), a future of the empty value
 * ({@code onFailure = SKIP}), or the failure handler's result (a future as is, any other value completed with it). A
 * lease the engine finds lost while the future runs fails the returned future at once with
 * {@link LockLostException} ({@link LostLeasePolicy#THROW}); the method's future is left to complete, and releases.
 */
final class FutureLockInvocation {

	private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

	/**
	 * Where the caller's future is completed when the engine completed the release or told of a loss on a thread of its
	 * own: {@code CompletableFuture}'s default asynchronous executor, as for its {@code *Async} methods.
	 */
	private static final Executor CALLER_STAGES = new CompletableFuture<Void>().defaultExecutor();

	private final @Nullable BeanFactory beanFactory;

	private final LostLeasePolicy lostLeasePolicy;

	FutureLockInvocation(@Nullable BeanFactory beanFactory, LostLeasePolicy lostLeasePolicy) {
		this.beanFactory = beanFactory;
		this.lostLeasePolicy = lostLeasePolicy;
	}

	/**
	 * Whether {@code method} returns a type this class locks: exactly {@code CompletableFuture} or
	 * {@code CompletionStage} (the future it returns is a {@code CompletableFuture}, so no other subtype would do).
	 */
	static boolean returnsFuture(Method method) {
		Class<?> type = method.getReturnType();
		return type == CompletableFuture.class || type == CompletionStage.class;
	}

	/**
	 * Run the call, observed from its start until the returned future completes when {@code registry} is not the
	 * no-op one.
	 */
	@Nullable Object invoke(MethodInvocation invocation, LockOperation operation, List<String> keys, LockService service,
			ObservationRegistry registry, @Nullable LockCallObservationConvention convention) throws Throwable {
		if (registry.isNoop()) {
			return invokeLocked(invocation, operation, keys, service);
		}
		LockCallContext context = new LockCallContext(operation.name(), keys, operation.description());
		Observation observation = LockObservationDocumentation.CALL.observation(convention,
				DefaultLockCallObservationConvention.INSTANCE, () -> context, registry);
		observation.start();
		Object result;
		try (Observation.Scope scope = observation.openScope()) {
			result = invokeLocked(invocation, operation, keys, service);
		}
		catch (Throwable ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
		if (result instanceof CompletionStage<?> stage) {
			stage.whenComplete((value, failure) -> {
				if (failure != null && !(failure instanceof CancellationException)) {
					observation.error(unwrap(failure));
				}
				observation.stop();
			});
		}
		else {
			observation.stop();
		}
		return result;
	}

	private @Nullable Object invokeLocked(MethodInvocation invocation, LockOperation operation, List<String> keys,
			LockService service) throws Throwable {
		LockOwner current = LockOwner.current();
		// nested in another invocation's body (its owner is bound): re-enter its leases rather than wait for them
		LockOwner owner = current.isThread() ? LockOwner.newOwner() : current;
		List<Lease> leases;
		try {
			leases = acquireAll(operation, keys, service, owner);
		}
		catch (LockException ex) {
			return onFailure(operation, invocation, ex);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		Held held = new Held(operation, leases);
		HoldAtLeastWindows.Nesting windows;
		try {
			windows = HoldAtLeastWindows.open(service, operation, keys);
		}
		catch (LockException ex) {
			held.releaseNow(ex);
			return onFailure(operation, invocation, ex);
		}
		catch (RuntimeException ex) {
			held.releaseNow(ex);
			return CompletableFuture.failedFuture(ex);
		}
		catch (Error ex) {
			held.releaseNow(ex);
			throw ex;
		}
		held.watchForLoss();
		Object result;
		try (LockOwner.Binding binding = owner.bind();
				windows;
				LockContext.Scope scope = LockContext.enter(leases)) {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			held.releaseNow(ex);
			throw ex;
		}
		if (result == null) {
			// no future to wait for: the work, if any, was not handed back; treat the call as synchronous
			held.releaseNow(null);
			return null;
		}
		return held.handOver((CompletionStage<?>) result);
	}

	/** Every key in order within one shared wait, all or none, for {@code owner}. */
	private List<Lease> acquireAll(LockOperation operation, List<String> keys, LockService service, LockOwner owner) {
		Function<LockRequest, Optional<Lease>> acquirer = (service instanceof AsyncLockService async)
				? (request) -> await(async.tryAcquireAsync(request, owner), request.key())
				: (request) -> {
					try (LockOwner.Binding binding = owner.bind()) {
						return service.tryAcquire(request);
					}
				};
		long deadline = System.nanoTime() + operation.waitTime().toNanos();
		List<Lease> leases = new ArrayList<>(keys.size());
		try {
			for (String key : keys) {
				Duration remaining = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
				LockRequest request = new LockRequest(key, operation.ttl(),
						(leases.isEmpty()) ? operation.waitTime() : remaining, !operation.fixedLease(), operation.name());
				Optional<Lease> lease = acquirer.apply(request);
				if (lease.isEmpty()) {
					throw new LockAcquisitionTimeoutException(key, operation.waitTime(), "Could not acquire lock '" + key
							+ "' for " + operation.description() + " within " + operation.waitTime().toMillis()
							+ "ms: it is held by another owner");
				}
				leases.add(lease.get());
			}
			return leases;
		}
		catch (RuntimeException | Error ex) {
			new Held(operation, leases).releaseNow(ex);
			throw ex;
		}
	}

	/**
	 * The outcome of an asynchronous acquisition, waited for on the calling thread. An interrupt abandons the wait
	 * (the service releases a lease granted meanwhile) and keeps the thread's interrupt status.
	 */
	private static Optional<Lease> await(CompletableFuture<Optional<Lease>> attempt, String key) {
		try {
			return attempt.get();
		}
		catch (InterruptedException ex) {
			attempt.cancel(true);
			Thread.currentThread().interrupt();
			throw new LockInterruptedException(key, ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(cause);
		}
	}

	private @Nullable Object onFailure(LockOperation operation, MethodInvocation invocation, LockException ex) {
		if (operation.failureHandler() != null) {
			Object handled;
			try {
				Assert.state(this.beanFactory != null, "A BeanFactory is needed to look up failure handlers");
				LockFailureHandler handler = this.beanFactory.getBean(operation.failureHandler(), LockFailureHandler.class);
				handled = handler.onLockFailure(new LockFailure(operation.method(), invocation.getArguments(),
						ex.getKey(), operation.waitTime(), ex));
			}
			catch (RuntimeException handlerFailure) {
				return CompletableFuture.failedFuture(handlerFailure);
			}
			return (handled instanceof CompletionStage<?>) ? handled : CompletableFuture.completedFuture(handled);
		}
		if (operation.onFailure() == OnLockFailure.SKIP && ex instanceof LockAcquisitionTimeoutException) {
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + operation.description() + ": " + ex.getMessage());
			}
			return CompletableFuture.completedFuture(emptyValue(operation.method()));
		}
		return CompletableFuture.failedFuture(ex);
	}

	/** What a skipped call's future holds: null, or the empty value of an optional result type. */
	private static @Nullable Object emptyValue(Method method) {
		Class<?> valueType = ResolvableType.forMethodReturnType(method).as(CompletionStage.class).getGeneric(0).resolve();
		return (valueType != null && !valueType.isPrimitive())
				? DistributedLockInterceptor.emptyValue(valueType) : null;
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/**
	 * The leases of one call, from acquisition to release: released at most once, then the returned future
	 * completes.
	 */
	private final class Held {

		private final LockOperation operation;

		private final List<Lease> leases;

		private final AtomicBoolean released = new AtomicBoolean();

		/** The loss that failed the returned future early, if one did. */
		private final AtomicReference<@Nullable LockLostException> lost = new AtomicReference<>();

		/** Completed once the leases are released; the future the call returns. */
		private final CompletableFuture<Object> returned;

		private volatile @Nullable CompletionStage<?> source;

		Held(LockOperation operation, List<Lease> leases) {
			this.operation = operation;
			this.leases = leases;
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
		 * to throw; engines that cannot tell a holder of a loss report it at release instead.
		 */
		void watchForLoss() {
			if (FutureLockInvocation.this.lostLeasePolicy != LostLeasePolicy.THROW) {
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
			LockLostException failure = new LockLostException(event);
			if (this.lost.compareAndSet(null, failure) && !this.returned.isDone()) {
				logger.warn(this.operation.description() + " lost its lock while its future was running: "
						+ failure.getMessage());
				// not on the engine's thread that tells of the loss: the caller's dependent stages run where it completes
				CALLER_STAGES.execute(() -> this.returned.completeExceptionally(failure));
			}
		}

		/** The method's future now owns the leases: release them when it completes. */
		CompletableFuture<Object> handOver(CompletionStage<?> stage) {
			this.source = stage;
			if (this.returned.isCancelled()) {
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
						logger.warn(this.operation.description() + ": could not release lock '" + unavailable.getKey()
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
				if (FutureLockInvocation.this.lostLeasePolicy == LostLeasePolicy.THROW) {
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
						logger.warn(this.operation.description() + ": could not release lock '" + unavailable.getKey()
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

	}

}
