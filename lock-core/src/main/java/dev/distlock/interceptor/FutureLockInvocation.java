package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
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
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.LogSafe;
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
 * {@linkplain LockOwner#newOwner(String) fresh owner} (described as {@code async Class.method}), or for the owner
 * already bound to the thread when the call is nested in another such call, so that it re-enters that call's leases;
 * through {@link AsyncLockService} with that owner when the service is one, else through the blocking
 * {@link LockService} with the owner bound. The method body runs
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
					observation.error(HeldLeases.unwrap(failure));
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
		LockOwner owner = current.isThread() ? LockOwner.newOwner(operation.ownerDescription("async")) : current;
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
		HeldLeases held = new HeldLeases(operation, leases, this.lostLeasePolicy);
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
		List<Lease> leases = new ArrayList<>(keys.size());
		try {
			OrderedAcquisition.acquire(operation, keys, acquirer, leases);
			return leases;
		}
		catch (RuntimeException | Error ex) {
			new HeldLeases(operation, leases, this.lostLeasePolicy).releaseNow(ex);
			throw ex;
		}
	}

	/**
	 * The outcome of an asynchronous acquisition, waited for on the calling thread. An interrupt abandons the wait and
	 * keeps the thread's interrupt status. Invariant: a lease granted for an abandoned wait is released, never left
	 * held: the service releases one it grants after the cancel, and a grant that completed the future just before the
	 * cancel (which then returns false) is released here, as this caller will never use it.
	 */
	private static Optional<Lease> await(CompletableFuture<Optional<Lease>> attempt, String key) {
		try {
			return attempt.get();
		}
		catch (InterruptedException ex) {
			if (!attempt.cancel(true)) {
				attempt.thenAccept((lease) -> lease.ifPresent(FutureLockInvocation::releaseUnused));
			}
			Thread.currentThread().interrupt();
			throw new LockInterruptedException(key, ex);
		}
		catch (ExecutionException ex) {
			throw OrderedAcquisition.causeOf(ex);
		}
	}

	/** A lease granted to a caller who gave up: released without blocking the interrupted caller. */
	private static void releaseUnused(Lease lease) {
		lease.releaseAsync().whenComplete((ignored, failure) -> {
			if (failure != null && logger.isDebugEnabled()) {
				logger.debug("Release of lock '" + LogSafe.escape(lease.key())
						+ "' after an interrupted acquisition failed", failure);
			}
		});
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

}
