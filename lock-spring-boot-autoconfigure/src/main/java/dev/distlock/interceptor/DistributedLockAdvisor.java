package dev.distlock.interceptor;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;

/** Applies the {@link DistributedLockInterceptor} to the methods the {@link LockOperationSource} has an operation for. */
public class DistributedLockAdvisor extends AbstractPointcutAdvisor {

	private final DistributedLockInterceptor interceptor;

	private final Pointcut pointcut;

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
