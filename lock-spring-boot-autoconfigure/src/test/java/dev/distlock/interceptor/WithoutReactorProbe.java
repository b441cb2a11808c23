package dev.distlock.interceptor;

import java.time.Duration;
import java.util.function.Supplier;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.InMemoryLockService;
import dev.distlock.core.LockService;

import org.springframework.aop.framework.ProxyFactory;

/**
 * Run by {@link WithoutReactorOrKotlinTests} in a class loader without Reactor, Reactive Streams or Kotlin: parses a
 * declaration and locks a call through a proxy, so that loading the interceptor never needs their classes.
 */
public class WithoutReactorProbe implements Supplier<String> {

	@Override
	public String get() {
		if (ReactiveReturnTypes.REACTOR_PRESENT || ReactiveReturnTypes.COROUTINES_REACTOR_PRESENT) {
			throw new IllegalStateException("Reactor or coroutines are visible to the probe");
		}
		LockService lockService = new InMemoryLockService();
		LockOperationSource source = new LockOperationSource(null, null, Duration.ofSeconds(30), Duration.ofSeconds(1));
		if (!source.validateClass(Counter.class)) {
			throw new IllegalStateException("No operation found");
		}
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(source, () -> lockService, null,
				LostLeasePolicy.THROW);
		ProxyFactory factory = new ProxyFactory(new Counter(lockService));
		factory.setProxyTargetClass(true);
		factory.addAdvice(interceptor);
		Counter counter = (Counter) factory.getProxy(WithoutReactorProbe.class.getClassLoader());
		return counter.increment("visits");
	}

	public static class Counter {

		private final LockService lockService;

		public Counter(LockService lockService) {
			this.lockService = lockService;
		}

		Counter() {
			this.lockService = new InMemoryLockService();
		}

		@DistributedLock(key = "'counter:' + #name")
		public String increment(String name) {
			return "locked=" + this.lockService.isLocked("counter:" + name);
		}

	}

}
