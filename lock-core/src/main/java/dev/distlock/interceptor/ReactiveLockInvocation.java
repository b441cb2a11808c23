package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.distlock.annotation.LockFailure;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.AsyncLockService;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.reactive.ReactiveLockService;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.Assert;
import org.springframework.util.function.SingletonSupplier;

/**
 * The call of a {@link dev.distlock.annotation.DistributedLock @DistributedLock} method that returns a lazy reactive
 * type ({@code Mono}, {@code Flux}, any deferred type of the {@link ReactiveAdapterRegistry}) or is a Kotlin
 * {@code suspend} function: the keys are evaluated at the call, and each subscription acquires, runs the method (once
 * per subscription, through the rest of the advice chain), and releases when its stream ends, through the
 * {@link ReactiveLockService}. A failure to acquire becomes the stream's outcome: empty for {@code SKIP}, an error for
 * {@code THROW}, or what the failure handler returns (a publisher, a value, or null for empty).
 * <p>
 * Only loaded with Reactor on the classpath ({@link ReactiveReturnTypes#REACTOR_PRESENT}).
 */
final class ReactiveLockInvocation {

	private static final Log logger = LogFactory.getLog(ReactiveLockInvocation.class);

	private final Supplier<ReactiveLockService> locks;

	private final @Nullable BeanFactory beanFactory;

	ReactiveLockInvocation(Supplier<LockService> lockService, @Nullable BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
		this.locks = SingletonSupplier.of(() -> reactiveLockService(lockService, beanFactory));
	}

	private static ReactiveLockService reactiveLockService(Supplier<LockService> lockService,
			@Nullable BeanFactory beanFactory) {
		ReactiveLockService bean = (beanFactory != null)
				? beanFactory.getBeanProvider(ReactiveLockService.class).getIfUnique() : null;
		if (bean != null) {
			return bean;
		}
		LockService service = lockService.get();
		Assert.state(service instanceof AsyncLockService, () -> "@DistributedLock methods that return a reactive type "
				+ "need a ReactiveLockService bean, or a LockService that is an AsyncLockService, but the LockService is a "
				+ service.getClass().getName() + ": declare a ReactiveLockService bean (ReactiveLockService.of(lockService))");
		return new ReactiveLockService((AsyncLockService) service);
	}

	/**
	 * The method's result, locked per subscription.
	 * @param invocation the call, not proceeded yet
	 * @param operation its lock operation
	 * @param keys the evaluated keys, sorted
	 * @return a publisher of the method's return type
	 */
	Object invoke(MethodInvocation invocation, LockOperation operation, List<String> keys) throws Throwable {
		List<LockRequest> requests = new ArrayList<>(keys.size());
		for (String key : keys) {
			requests.add(operation.request(key, operation.waitTime()));
		}
		Supplier<Object> proceed = proceedPerSubscription(invocation);
		Object[] arguments = invocation.getArguments();
		ReactiveLockService locks = this.locks.get();
		Method method = operation.method();
		// the holder label of a subscription's leases names the method: "reactive InventoryService.reserve"
		Function<Context, Context> described = ReactiveLockService
			.describingOwners(operation.ownerDescription("reactive"));
		if (ReactiveReturnTypes.isSuspending(method)) {
			// Spring's proxies hand interceptors a suspend function's result as a Publisher and await what they return
			return locks.withLocks(requests, (leases) -> Mono.from(publisher(proceed.get(), null)),
					(failure) -> Mono.from(onFailure(operation, arguments, failure))).contextWrite(described);
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(method.getReturnType());
		Assert.state(adapter != null, () -> "No reactive adapter for " + operation.description());
		if (adapter.isMultiValue()) {
			Flux<Object> locked = locks.withLocksMany(requests, (leases) -> publisher(proceed.get(), adapter),
					(failure) -> onFailure(operation, arguments, failure));
			return adapter.fromPublisher(locked.contextWrite(described));
		}
		Mono<Object> locked = locks.withLocks(requests, (leases) -> Mono.from(publisher(proceed.get(), adapter)),
				(failure) -> Mono.from(onFailure(operation, arguments, failure)));
		return adapter.fromPublisher(locked.contextWrite(described));
	}

	/**
	 * Each subscription runs the method (and the advice after this one) anew, as a clone of the invocation made before
	 * it proceeds; an invocation that cannot be cloned runs once, now, and its result is locked when subscribed.
	 */
	private static Supplier<Object> proceedPerSubscription(MethodInvocation invocation) throws Throwable {
		if (invocation instanceof ProxyMethodInvocation proxyInvocation) {
			return () -> {
				try {
					Object result = proxyInvocation.invocableClone().proceed();
					return (result != null) ? result : Mono.empty();
				}
				catch (Throwable ex) {
					return Mono.error(ex);
				}
			};
		}
		Object result = invocation.proceed();
		Object once = (result != null) ? result : Mono.empty();
		return () -> once;
	}

	@SuppressWarnings("unchecked")
	private static Publisher<Object> publisher(Object result, @Nullable ReactiveAdapter adapter) {
		if (result instanceof Publisher<?> publisher) {
			return (Publisher<Object>) publisher;
		}
		Assert.state(adapter != null, () -> "Not a Publisher: " + result);
		return (Publisher<Object>) adapter.toPublisher(result);
	}

	/** What a call that did not get its lock emits: as {@link DistributedLockInterceptor} decides, as a stream. */
	private Publisher<Object> onFailure(LockOperation operation, Object[] arguments, LockException failure) {
		LockException ex = failure;
		if (ex instanceof LockAcquisitionTimeoutException) {
			ex = new LockAcquisitionTimeoutException(ex.getKey(), operation.waitTime(), "Could not acquire lock '"
					+ ex.getKey() + "' for " + operation.description() + " within " + operation.waitTime().toMillis()
					+ "ms: it is held by another owner");
		}
		if (operation.failureHandler() != null) {
			try {
				Assert.state(this.beanFactory != null, "A BeanFactory is needed to look up failure handlers");
				LockFailureHandler handler = this.beanFactory.getBean(operation.failureHandler(), LockFailureHandler.class);
				Object value = handler.onLockFailure(new LockFailure(operation.method(), arguments, ex.getKey(),
						operation.waitTime(), ex));
				if (value == null) {
					return Mono.empty();
				}
				ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(value.getClass());
				return (adapter != null) ? publisher(value, adapter) : Mono.just(value);
			}
			catch (RuntimeException handlerFailure) {
				return Mono.error(handlerFailure);
			}
		}
		if (operation.onFailure() == OnLockFailure.SKIP && ex instanceof LockAcquisitionTimeoutException) {
			if (logger.isDebugEnabled()) {
				logger.debug("Skipped " + operation.description() + ": " + ex.getMessage());
			}
			return Mono.empty();
		}
		return Mono.error(ex);
	}

}
