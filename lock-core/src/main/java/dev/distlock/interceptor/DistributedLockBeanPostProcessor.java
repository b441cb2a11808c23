package dev.distlock.interceptor;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.OrderComparator;

/**
 * Puts the {@link DistributedLockAdvisor} in front of every bean with a
 * {@link dev.distlock.annotation.DistributedLock @DistributedLock} method, like Spring's own {@code @Retryable} and
 * {@code @ConcurrencyLimit} post-processors: no auto-proxy creator and no AspectJ needed.
 * <p>
 * A bean that is already a proxy (for {@code @Transactional}, say) gets the advisor added to its chain at the place
 * its order says, ahead of every advisor with a higher order value. With the default order (highest precedence) the
 * lock is taken before the transaction begins and released after it has committed or rolled back, so the next holder
 * sees the committed data.
 * <p>
 * Annotated methods of every bean are validated when the bean is created, and the failure handlers they name once
 * every singleton exists: a bad declaration fails the start.
 *
 * @since 0.1.0
 */
public class DistributedLockBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
		implements SmartInitializingSingleton {

	/** Where the methods' lock operations come from; validates each bean class once. */
	private final LockOperationSource operationSource;

	/** The advice; asked for its lock service once every singleton exists, to check the lease times. */
	private final DistributedLockInterceptor interceptor;

	/** Whether each bean class seen has a locked method. */
	private final Map<Class<?>, Boolean> annotatedClasses = new ConcurrentHashMap<>(256);

	/**
	 * A post-processor that proxies the beans with locked methods.
	 * @param operationSource where the methods' lock operations come from
	 * @param interceptor the advice
	 * @param order the advisor's order among the advisors of a bean
	 */
	public DistributedLockBeanPostProcessor(LockOperationSource operationSource, DistributedLockInterceptor interceptor,
			int order) {
		this.operationSource = operationSource;
		this.interceptor = interceptor;
		this.advisor = new DistributedLockAdvisor(operationSource, interceptor, order);
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		Advisor advisor = this.advisor;
		if (advisor != null && bean instanceof Advised advised && !(bean instanceof AopInfrastructureBean)
				&& !advised.isFrozen() && isEligible(AopUtils.getTargetClass(bean))) {
			advised.addAdvisor(positionFor(advised, advisor), advisor);
			return bean;
		}
		return super.postProcessAfterInitialization(bean, beanName);
	}

	/**
	 * Now that every singleton exists, the bean factory can tell whether each named failure handler is one, and the
	 * lock service how short a renewed lease may be and which lock modes it refuses.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.operationSource.validateFailureHandlers();
		LeaseTimeCheck.warnAboutShortLeases(this.operationSource, this.interceptor.lockService());
		EngineModeCheck.refuseModesTheServiceRefuses(this.operationSource, this.interceptor.lockService());
	}

	/** Before the first advisor that orders after ours; after those that order before or the same. */
	private static int positionFor(Advised advised, Advisor ours) {
		Advisor[] existing = advised.getAdvisors();
		for (int i = 0; i < existing.length; i++) {
			if (OrderComparator.INSTANCE.compare(existing[i], ours) > 0) {
				return i;
			}
		}
		return existing.length;
	}

	@Override
	protected boolean isEligible(Class<?> targetClass) {
		// Validates every annotated method of the class, not only the first one a pointcut check would look at.
		if (!this.annotatedClasses.computeIfAbsent(targetClass, this.operationSource::validateClass)) {
			return false;
		}
		return super.isEligible(targetClass);
	}

}
