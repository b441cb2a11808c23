package dev.distlock.aspectj;

import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.interceptor.DistributedLockInterceptor;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.annotation.DeclarePrecedence;
import org.aspectj.lang.annotation.Pointcut;
import org.jspecify.annotations.Nullable;

/**
 * Locks every execution of a {@link dev.distlock.annotation.DistributedLock @DistributedLock} method of a woven class,
 * including a bean's calls to its own methods ({@code this.purchase()}) and private or final methods, which a proxy
 * cannot see. Annotation-style, compiled by ajc, so it works woven at compile time (on the aspect path of
 * {@code aspectj-maven-plugin}) and at load time (listed in this module's {@code META-INF/aop.xml}).
 * <p>
 * The aspect holds no locking code: it hands each join point, as an AOP Alliance {@code MethodInvocation}, to the
 * {@link DistributedLockInterceptor} the proxies of the default mode run, so both modes lock, observe and fail the same
 * way. That interceptor comes from the Spring application context: {@code @EnableDistributedLocks(mode =
 * AdviceMode.ASPECTJ)} imports {@link AspectJDistributedLockConfiguration}, which gets this aspect's single instance
 * ({@code aspectOf()}, as Spring's {@code AnnotationTransactionAspect} is configured) and configures it.
 * <p>
 * <strong>Until it is configured, and after the context that configured it is closed, the aspect does nothing:</strong>
 * the method runs unlocked, as if it were not woven. So a locked method called before the context has configured the
 * aspect (from a constructor or an {@code @PostConstruct} of a bean created earlier, or in a program without Spring) is
 * not locked. The aspect is one instance per class loader: one application context configures it at a time, the last
 * one started.
 * <p>
 * The pointcut matches what AspectJ sees: methods annotated with {@code @DistributedLock} or with an annotation that
 * is itself annotated with it. An annotation on an interface method or on an overridden method is not inherited by the
 * implementing method; the startup check of AspectJ mode rejects such a declaration.
 * <p>
 * Among the aspects woven into a method this one runs first (outermost), as the proxy of the default mode does with its
 * default order: so the lock wraps, for instance, the transaction of Spring's {@code AnnotationTransactionAspect}.
 *
 * @since 0.1.0
 */
@Aspect
@DeclarePrecedence("dev.distlock.aspectj.DistributedLockAspect, *")
public class DistributedLockAspect {

	/** Set by the application context, cleared when it closes. */
	private final AtomicReference<@Nullable DistributedLockInterceptor> interceptor = new AtomicReference<>();

	/** Made by AspectJ: one instance per class loader, {@code Aspects.aspectOf(DistributedLockAspect.class)}. */
	public DistributedLockAspect() {
	}

	/**
	 * Lock the methods with this interceptor from now on.
	 * @param interceptor the interceptor the application context made, as for proxies
	 */
	public void configure(DistributedLockInterceptor interceptor) {
		this.interceptor.set(interceptor);
	}

	/**
	 * Stop locking with {@code interceptor}, unless another context has configured the aspect since.
	 * @param interceptor the interceptor given to {@link #configure}
	 * @return whether the aspect used it until now
	 */
	public boolean release(DistributedLockInterceptor interceptor) {
		return this.interceptor.compareAndSet(interceptor, null);
	}

	/** {@return whether an application context has configured the aspect, so that it locks} */
	public boolean isConfigured() {
		return this.interceptor.get() != null;
	}

	/** Executions of the methods annotated with {@code @DistributedLock}, directly or through one meta-annotation. */
	@Pointcut("execution(@dev.distlock.annotation.DistributedLock * *(..)) "
			+ "|| execution(@(@dev.distlock.annotation.DistributedLock *) * *(..))")
	public void lockedMethodExecution() {
	}

	/**
	 * Run the method under its lock(s), or as it is when the aspect is not configured.
	 * @param joinPoint the execution of a locked method
	 * @return what the method returns, or what the declaration's failure policy returns when the lock is not acquired
	 * @throws Throwable what the method throws, or the lock failure
	 */
	@Around("lockedMethodExecution()")
	public @Nullable Object lock(ProceedingJoinPoint joinPoint) throws Throwable {
		DistributedLockInterceptor current = this.interceptor.get();
		if (current == null) {
			return joinPoint.proceed();
		}
		return current.invoke(new JoinPointMethodInvocation(joinPoint));
	}

}
