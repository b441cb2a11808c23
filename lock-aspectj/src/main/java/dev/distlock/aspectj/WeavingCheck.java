package dev.distlock.aspectj;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.annotation.DistributedLock;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Fails the start when a bean has a {@link DistributedLock @DistributedLock} method that {@link DistributedLockAspect}
 * was not woven into: in AspectJ mode nothing else would lock it, and it would run unlocked without a word (the build
 * has no weaving plugin, the aspect is not on its aspect path, or the agent is missing or excludes the class).
 * <p>
 * A woven method is recognised by what ajc and the load-time weaver make of an {@code @Around} advice on a method
 * execution: the method's body moves to a static method of its class named after it, {@code <name>_aroundBody<n>},
 * which takes the object (for an instance method), the method's parameters and the join point.
 */
final class WeavingCheck implements BeanPostProcessor, AopInfrastructureBean {

	private final Map<Class<?>, Boolean> checkedClasses = new ConcurrentHashMap<>(256);

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof AopInfrastructureBean)) {
			this.checkedClasses.computeIfAbsent(ClassUtils.getUserClass(AopUtils.getTargetClass(bean)), this::check);
		}
		return bean;
	}

	private boolean check(Class<?> userClass) {
		ReflectionUtils.doWithMethods(userClass, (method) -> {
			if (!isWoven(method)) {
				throw new IllegalStateException(method.getDeclaringClass().getName() + "." + method.getName()
						+ " has @DistributedLock but is not woven with " + DistributedLockAspect.class.getName()
						+ ", so in AspectJ mode (@EnableDistributedLocks(mode = AdviceMode.ASPECTJ)) nothing would lock "
						+ "it: compile " + method.getDeclaringClass().getName() + " with aspectj-maven-plugin and "
						+ "dev.distlock:lock-aspectj as an aspect library, or run with -javaagent:aspectjweaver.jar and "
						+ "let its aop.xml include the class; or use the default proxy mode");
			}
		}, WeavingCheck::isAdvised);
		return true;
	}

	/** What the aspect's pointcut matches: a method with a body, annotated directly or through one meta-annotation. */
	private static boolean isAdvised(Method method) {
		if (Modifier.isAbstract(method.getModifiers()) || method.isBridge() || method.isSynthetic()) {
			return false;
		}
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

	private static boolean isWoven(Method method) {
		int parameters = method.getParameterCount() + (Modifier.isStatic(method.getModifiers()) ? 1 : 2);
		String prefix = method.getName() + "_aroundBody";
		for (Method candidate : method.getDeclaringClass().getDeclaredMethods()) {
			if (candidate.getName().startsWith(prefix) && Modifier.isStatic(candidate.getModifiers())
					&& candidate.getParameterCount() == parameters) {
				return true;
			}
		}
		return false;
	}

}
