package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.function.Supplier;

import dev.distlock.annotation.LockContext;
import dev.distlock.annotation.LockFailure;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockException;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockService;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import dev.distlock.observability.DefaultLockCallObservationConvention;
import dev.distlock.observability.LockCallContext;
import dev.distlock.observability.LockCallObservationConvention;
import dev.distlock.observability.LockObservationDocumentation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.Assert;

/**
 * Runs an annotated method while holding its lock(s): evaluate the key, acquire (all keys in sorted order, all or
 * none, within one shared wait), expose the leases through {@link LockContext}, proceed, release in reverse order.
 * Everything about the declaration was decided once by the {@link LockOperationSource}. A method that returns a
 * {@code CompletableFuture} or {@code CompletionStage} holds its lock(s) until that future completes
 * ({@link FutureLockInvocation}).
 *
 * @since 0.1.0
 */
public class DistributedLockInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

	private static final Map<Class<?>, Object> EMPTY_VALUES = Map.ofEntries(Map.entry(Optional.class, Optional.empty()),
			Map.entry(OptionalInt.class, OptionalInt.empty()), Map.entry(OptionalLong.class, OptionalLong.empty()),
			Map.entry(OptionalDouble.class, OptionalDouble.empty()), Map.entry(boolean.class, false),
			Map.entry(char.class, '\0'), Map.entry(byte.class, (byte) 0), Map.entry(short.class, (short) 0),
			Map.entry(int.class, 0), Map.entry(long.class, 0L), Map.entry(float.class, 0f), Map.entry(double.class, 0d));

	private final LockOperationSource operationSource;

	private final Supplier<LockService> lockService;

	private final @Nullable BeanFactory beanFactory;

	private final LostLeasePolicy lostLeasePolicy;

	/** Calls of methods returning a {@code CompletableFuture} or {@code CompletionStage}. */
	private final FutureLockInvocation futures;

	private Supplier<ObservationRegistry> observationRegistry = () -> ObservationRegistry.NOOP;

	private @Nullable LockCallObservationConvention callConvention;

	private volatile boolean interruptOnMaxHold;

	/** Methods returning a reactive type, and Kotlin suspend functions; only with Reactor on the classpath. */
	private final @Nullable ReactiveLockInvocation reactiveInvocation;

	/**
	 * An interceptor that locks the calls {@code operationSource} has an operation for.
	 * @param operationSource where the methods' lock operations come from
	 * @param lockService looked up on first use, so the interceptor can be created before the service's dependencies
	 * @param beanFactory where failure handler beans are looked up by name; may be null when no method names one
	 * @param lostLeasePolicy what a call whose lease was lost while it ran ends with
	 */
	public DistributedLockInterceptor(LockOperationSource operationSource, Supplier<LockService> lockService,
			@Nullable BeanFactory beanFactory, LostLeasePolicy lostLeasePolicy) {
		this.operationSource = operationSource;
		this.lockService = lockService;
		this.beanFactory = beanFactory;
		this.lostLeasePolicy = lostLeasePolicy;
		this.futures = new FutureLockInvocation(beanFactory, lostLeasePolicy);
		this.reactiveInvocation = ReactiveReturnTypes.REACTOR_PRESENT
				? new ReactiveLockInvocation(lockService, beanFactory) : null;
	}

	/**
	 * Observe calls with this registry (looked up on first use); without one nothing is observed. Acquisitions are
	 * observed by the lock service itself when it is an {@link dev.distlock.observability.ObservedLockService}.
	 * @param observationRegistry supplies the registry
	 */
	public void setObservationRegistry(Supplier<ObservationRegistry> observationRegistry) {
		Assert.notNull(observationRegistry, "'observationRegistry' must not be null");
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Name and tag locked-call observations with this convention instead of the default one.
	 * @param convention the convention, or {@code null} for the default one
	 */
	public void setCallObservationConvention(@Nullable LockCallObservationConvention convention) {
		this.callConvention = convention;
	}

	/**
	 * Whether the thread running a blocking locked method is interrupted when one of its leases is lost because it was
	 * held for its {@code maxHold} ({@link dev.distlock.core.LockLostEvent.Detection#MAX_HOLD_EXCEEDED}); off by
	 * default. Only that thread, and only while the method runs: a loss told after the method returned interrupts
	 * nothing. Methods returning a future have it cancelled, and reactive ones fail, whatever this says.
	 * @param interruptOnMaxHold whether to interrupt the thread
	 * @since 0.7.0
	 */
	public void setInterruptOnMaxHold(boolean interruptOnMaxHold) {
		this.interruptOnMaxHold = interruptOnMaxHold;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Method method = invocation.getMethod();
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
		LockOperation operation = this.operationSource.getOperation(method, targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		List<String> keys = this.operationSource.evaluator().keys(operation, invocation.getArguments(), target, targetClass);
		if (this.reactiveInvocation != null && ReactiveReturnTypes.isReactive(operation.method())) {
			return this.reactiveInvocation.invoke(invocation, operation, keys);
		}
		ObservationRegistry registry = this.observationRegistry.get();
		if (FutureLockInvocation.returnsFuture(operation.method())) {
			return this.futures.invoke(invocation, operation, keys, this.lockService.get(), registry, this.callConvention);
		}
		if (registry.isNoop()) {
			return invokeLocked(invocation, operation, keys);
		}
		LockCallContext context = new LockCallContext(operation.name(), keys, operation.description());
		Observation observation = LockObservationDocumentation.CALL.observation(this.callConvention,
				DefaultLockCallObservationConvention.INSTANCE, () -> context, registry);
		return observation.observeChecked(() -> invokeLocked(invocation, operation, keys));
	}

	private @Nullable Object invokeLocked(MethodInvocation invocation, LockOperation operation, List<String> keys)
			throws Throwable {
		List<Lease> leases;
		try {
			leases = acquireAll(operation, keys);
		}
		catch (LockException ex) {
			return onFailure(operation, invocation, ex);
		}
		HoldAtLeastWindows.Nesting windows;
		try {
			windows = HoldAtLeastWindows.open(this.lockService.get(), operation, keys);
		}
		catch (LockException ex) {
			releaseAll(operation, leases, ex);
			return onFailure(operation, invocation, ex);
		}
		catch (RuntimeException | Error ex) {
			releaseAll(operation, leases, ex);
			throw ex;
		}
		Object result;
		MaxHoldInterrupt interrupt = (this.interruptOnMaxHold && operation.maxHold() != null)
				? MaxHoldInterrupt.watch(leases) : null;
		try (windows; LockContext.Scope scope = LockContext.enter(leases)) {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			if (interrupt != null) {
				interrupt.returned();
			}
			releaseAll(operation, leases, ex);
			throw ex;
		}
		if (interrupt != null) {
			interrupt.returned();
		}
		releaseAll(operation, leases, null);
		return result;
	}

	private List<Lease> acquireAll(LockOperation operation, List<String> keys) {
		LockService service = this.lockService.get();
		List<Lease> leases = new ArrayList<>(keys.size());
		try {
			OrderedAcquisition.acquire(operation, keys, service::tryAcquire, leases);
			return leases;
		}
		catch (RuntimeException ex) {
			releaseAll(operation, leases, ex);
			throw ex;
		}
	}

	/**
	 * Release in reverse order. With {@code failure} (the method threw, or a later key was not acquired) problems are
	 * attached to it; otherwise a lost lease is thrown or logged by the {@link LostLeasePolicy}, and an unreachable
	 * Redis is logged (the lease expires at its ttl; the call itself ran under the lock).
	 */
	private void releaseAll(LockOperation operation, List<Lease> leases, @Nullable Throwable failure) {
		LockLostException lost = null;
		for (int i = leases.size() - 1; i >= 0; i--) {
			try {
				leases.get(i).release();
			}
			catch (LockLostException ex) {
				if (failure != null) {
					failure.addSuppressed(ex);
				}
				else if (lost == null) {
					lost = ex;
				}
				else {
					lost.addSuppressed(ex);
				}
			}
			catch (LockUnavailableException ex) {
				logger.warn(operation.description() + ": could not release lock '" + LogSafe.escape(ex.getKey())
						+ "'; it expires at the end of its lease time", ex);
				if (failure != null) {
					failure.addSuppressed(ex);
				}
			}
		}
		if (lost != null) {
			if (this.lostLeasePolicy == LostLeasePolicy.THROW) {
				throw lost;
			}
			logger.warn(operation.description() + " ran without exclusive access: " + lost.getMessage());
		}
	}

	private @Nullable Object onFailure(LockOperation operation, MethodInvocation invocation, LockException ex) {
		if (operation.failureHandler() != null) {
			Assert.state(this.beanFactory != null, "A BeanFactory is needed to look up failure handlers");
			LockFailureHandler handler = this.beanFactory.getBean(operation.failureHandler(), LockFailureHandler.class);
			return handler.onLockFailure(new LockFailure(operation.method(), invocation.getArguments(), ex.getKey(),
					operation.waitTime(), ex));
		}
		if (operation.onFailure() == OnLockFailure.SKIP && ex instanceof LockAcquisitionTimeoutException) {
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + operation.description() + ": " + ex.getMessage());
			}
			return emptyValue(operation.method().getReturnType());
		}
		throw ex;
	}

	/** What a skipped call returns: null, or the empty value of an optional or primitive return type. */
	static @Nullable Object emptyValue(Class<?> type) {
		return EMPTY_VALUES.get(type);
	}

	/** {@return the lock service, looked up on first use} */
	Supplier<LockService> lockService() {
		return this.lockService;
	}

}
