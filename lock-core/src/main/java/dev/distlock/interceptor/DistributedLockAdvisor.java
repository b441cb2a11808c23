package dev.distlock.interceptor;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;

/** Applies the {@link DistributedLockInterceptor} to the methods the {@link LockOperationSource} has an operation for. */
public class DistributedLockAdvisor extends AbstractPointcutAdvisor {

	/** The advice. */
	private final DistributedLockInterceptor interceptor;

	/** Matches the methods the operation source has an operation for. */
	private final Pointcut pointcut;

	/**
	 * An advisor for the methods {@code operationSource} has an operation for.
	 * @param operationSource where the methods' lock operations come from
	 * @param interceptor the advice
	 * @param order the advisor's order among the advisors of a bean
	 */
	public DistributedLockAdvisor(LockOperationSource operationSource, DistributedLockInterceptor interceptor, int order) {
		this.interceptor = interceptor;
		this.pointcut = new StaticMethodMatcherPointcut() {
			@Override
			public boolean matches(Method method, Class<?> targetClass) {
				return operationSource.getOperation(method, targetClass) != null;
			}
		};
		setOrder(order);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

}
