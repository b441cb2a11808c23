package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashSet;
import java.util.Set;

import dev.distlock.annotation.DistributedLock;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.util.ClassUtils;

/**
 * Registers, for each bean with a {@link DistributedLock @DistributedLock} method, what a GraalVM native image needs
 * to lock its calls, as Spring's {@code TransactionBeanRegistrationAotProcessor} does for {@code @Transactional}:
 * <ul>
 * <li>its locked methods, for invocation: {@link LockOperationSource} and {@link LockDeclarationValidator} find them
 * among the class's declared methods and read their annotations, the key evaluator binds {@code #name} to the
 * method's parameter names, and the proxy calls the target method reflectively. A native image lists among a class's
 * declared methods only those registered.</li>
 * <li>the interfaces of the JDK proxy the {@link DistributedLockBeanPostProcessor} makes when the bean implements
 * interfaces: a native image cannot define proxy classes at run time, and has only those whose interfaces were named,
 * in the same order. So they are taken from the proxy class the post-processor itself makes for the bean's class
 * ({@code determineBeanType}), with its settings. A class proxied with CGLIB needs no proxy hint: Spring's AOT
 * generates that proxy class, and registers it and the class's methods, when it asks the same post-processor for
 * the bean's type.</li>
 * </ul>
 * In AspectJ mode ({@code @EnableDistributedLocks(mode = ASPECTJ)}) there is no such post-processor, so no proxy.
 * Registered in {@code META-INF/spring/aot.factories}.
 */
final class DistributedLockBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = ClassUtils.getUserClass(registeredBean.getBeanClass());
		Set<Method> lockedMethods = lockedMethods(beanClass);
		if (lockedMethods.isEmpty()) {
			return null;
		}
		Class<?> proxyClass = proxyClass(registeredBean, beanClass);
		return (generationContext, beanRegistrationCode) -> {
			RuntimeHints hints = generationContext.getRuntimeHints();
			lockedMethods.forEach((method) -> hints.reflection().registerMethod(method, ExecutableMode.INVOKE));
			if (proxyClass != null && Proxy.isProxyClass(proxyClass)) {
				Class<?>[] interfaces = proxyClass.getInterfaces();
				hints.proxies().registerJdkProxy(interfaces);
				for (Class<?> proxiedInterface : interfaces) {
					hints.reflection().registerType(proxiedInterface, MemberCategory.INVOKE_DECLARED_METHODS);
				}
			}
		};
	}

	/**
	 * The locked methods of {@code beanClass}, as {@link LockOperationSource#annotatedMethods} finds them, and the
	 * implementations of locked interface methods.
	 */
	static Set<Method> lockedMethods(Class<?> beanClass) {
		Set<Method> methods = new LinkedHashSet<>();
		for (Method method : LockOperationSource.annotatedMethods(beanClass)) {
			methods.add(method);
			if (method.getDeclaringClass().isInterface()) {
				methods.add(ClassUtils.getMostSpecificMethod(method, beanClass));
			}
		}
		return methods;
	}

	/**
	 * The class of the proxy the post-processor makes for the bean; {@code null} without a post-processor (AspectJ
	 * mode, or no interceptor configured).
	 */
	private static @Nullable Class<?> proxyClass(RegisteredBean registeredBean, Class<?> beanClass) {
		DistributedLockBeanPostProcessor postProcessor = registeredBean.getBeanFactory()
			.getBeanProvider(DistributedLockBeanPostProcessor.class)
			.getIfUnique();
		return (postProcessor != null) ? postProcessor.determineBeanType(beanClass, registeredBean.getBeanName()) : null;
	}

}
