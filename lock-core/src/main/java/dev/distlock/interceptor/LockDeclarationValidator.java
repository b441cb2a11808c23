package dev.distlock.interceptor;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.core.LockService;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks the {@link DistributedLock @DistributedLock} declarations of every bean when it is created, without
 * proxying it: the startup check of AspectJ mode ({@link dev.distlock.annotation.EnableDistributedLocks}), where the
 * woven aspect, not a proxy, locks the calls. So a bad key, duration or failure handler fails the start in this mode
 * too. Private, final and static methods are accepted, as the aspect advises them; a declaration the aspect's pointcut
 * cannot see (inherited from an interface or an overridden method, or through more than one level of
 * meta-annotation) is rejected, as it would
 * silently not lock.
 *
 * @since 0.1.0
 */
public class LockDeclarationValidator implements BeanPostProcessor, SmartInitializingSingleton, AopInfrastructureBean {

	/** Where the methods' lock operations come from; shared with the interceptor the aspect runs. */
	private final LockOperationSource operationSource;

	private final Supplier<LockService> lockService;

	/** The classes checked so far. */
	private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>(256);

	/**
	 * A validator that parses declarations with the interceptor's operation source.
	 * @param operationSource where the methods' lock operations come from
	 */
	public LockDeclarationValidator(LockOperationSource operationSource) {
		this(operationSource, () -> {
			throw new IllegalStateException("No lock service to check the lease times against");
		});
	}

	/**
	 * A validator that parses declarations with the interceptor's operation source, and, once every singleton exists,
	 * warns about renewed lease times too short for {@code lockService} ({@link LockService#shortestRenewableTtl()}).
	 * @param operationSource where the methods' lock operations come from
	 * @param lockService the lock service, looked up after every singleton exists (a supplier that throws: none)
	 * @since 0.7.0
	 */
	public LockDeclarationValidator(LockOperationSource operationSource, Supplier<LockService> lockService) {
		this.operationSource = operationSource;
		this.lockService = lockService;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof AopInfrastructureBean)) {
			this.checkedClasses.computeIfAbsent(ClassUtils.getUserClass(AopUtils.getTargetClass(bean)), this::check);
		}
		return bean;
	}

	/**
	 * Now that every singleton exists, the bean factory can tell whether each named failure handler is one, and the
	 * lock service which lock modes it refuses.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.operationSource.validateFailureHandlers();
		LeaseTimeCheck.warnAboutShortLeases(this.operationSource, this.lockService);
		EngineModeCheck.refuseModesTheServiceRefuses(this.operationSource, this.lockService);
	}

	private boolean check(Class<?> userClass) {
		ReflectionUtils.doWithMethods(userClass, (method) -> {
			if (!isVisibleToAspect(method)) {
				throw new InvalidLockDeclarationException(LockOperationSource.describe(method, userClass), null,
						"@DistributedLock reaches this method only from an interface, an overridden method or more than "
								+ "one level of meta-annotations, none of which the AspectJ aspect sees (annotations on "
								+ "methods are not inherited): annotate this method itself with @DistributedLock",
						null);
			}
			this.operationSource.getOperation(method, userClass);
		}, (method) -> !method.isBridge() && !method.isSynthetic()
				&& AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class));
		return true;
	}

	/** Directly annotated, or through one meta-annotation: what {@code DistributedLockAspect}'s pointcut matches. */
	private static boolean isVisibleToAspect(Method method) {
		if (method.isAnnotationPresent(DistributedLock.class)) {
			return true;
		}
		for (Annotation annotation : method.getDeclaredAnnotations()) {
			if (annotation.annotationType().isAnnotationPresent(DistributedLock.class)) {
				return true;
			}
		}
		return false;
	}

}
