package dev.distlock.aspectj;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInvocation;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.reflect.MethodSignature;
import org.jspecify.annotations.Nullable;

/**
 * An AspectJ method execution seen as the AOP Alliance invocation the {@code DistributedLockInterceptor} takes, so the
 * aspect and the proxies share one implementation: the method as declared, the object it runs on ({@code null} for a
 * static method), its arguments, and {@code proceed()} to run it.
 */
final class JoinPointMethodInvocation implements MethodInvocation {

	private final ProceedingJoinPoint joinPoint;

	private final Method method;

	JoinPointMethodInvocation(ProceedingJoinPoint joinPoint) {
		this.joinPoint = joinPoint;
		this.method = ((MethodSignature) joinPoint.getSignature()).getMethod();
	}

	@Override
	public Method getMethod() {
		return this.method;
	}

	@Override
	public Object[] getArguments() {
		return this.joinPoint.getArgs();
	}

	@Override
	public @Nullable Object proceed() throws Throwable {
		return this.joinPoint.proceed();
	}

	@Override
	public @Nullable Object getThis() {
		return this.joinPoint.getTarget();
	}

	@Override
	public AccessibleObject getStaticPart() {
		return this.method;
	}

	@Override
	public String toString() {
		return "AspectJ execution of " + this.method;
	}

}
