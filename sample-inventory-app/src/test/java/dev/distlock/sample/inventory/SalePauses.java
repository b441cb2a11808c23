package dev.distlock.sample.inventory;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.sample.inventory.stock.InventoryStore;
import org.aopalliance.intercept.MethodInterceptor;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * A test hook that holds a purchase of the real flow between its read and its write, the way a long GC pause or a
 * slow payment call would: the next {@link InventoryStore#recordSale sale} of an armed SKU waits until the test
 * {@link Pause#resume() resumes} it, then writes through the real store. Nothing else changes: the purchase holds its
 * real lease, and whatever the write meets in Redis (a newer fence, another server) is real.
 * <p>
 * Import it into an application context ({@code @Import(SalePauses.class)} or as a source): it wraps the context's
 * {@link InventoryStore}, whichever Redis that store uses.
 */
public final class SalePauses implements BeanPostProcessor {

	/** A paused sale never outlives a test that forgot to resume it by much. */
	private static final Duration MAX_PAUSE = Duration.ofMinutes(2);

	private final Map<String, Pause> armed = new ConcurrentHashMap<>();

	/** Hold the next sale of {@code sku} (only that one) before it writes. */
	public Pause pauseNextSale(String sku) {
		Pause pause = new Pause(sku);
		this.armed.put(sku, pause);
		return pause;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof InventoryStore)) {
			return bean;
		}
		ProxyFactory proxy = new ProxyFactory(bean);
		proxy.setProxyTargetClass(true);
		proxy.addAdvice((MethodInterceptor) (invocation) -> {
			if (invocation.getMethod().getName().equals("recordSale")) {
				Object[] arguments = invocation.getArguments();
				Pause pause = this.armed.remove((String) arguments[0]);
				if (pause != null) {
					pause.hold((Long) arguments[3]);
				}
			}
			return invocation.proceed();
		});
		return proxy.getProxy();
	}

	/** One armed pause: where the sale stopped, and the latch that lets it go on. */
	public static final class Pause {

		private final String sku;

		private final CountDownLatch reached = new CountDownLatch(1);

		private final CountDownLatch resumed = new CountDownLatch(1);

		private volatile @Nullable Long fencingToken;

		Pause(String sku) {
			this.sku = sku;
		}

		/**
		 * Wait until the sale has read, checked and computed, and is about to write.
		 * @return the fencing token it is about to write with
		 */
		public long awaitReached(Duration timeout) throws InterruptedException {
			if (!this.reached.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new AssertionError("No sale of '" + this.sku + "' reached its write within " + timeout);
			}
			Long token = this.fencingToken;
			if (token == null) {
				throw new AssertionError("The sale of '" + this.sku + "' writes without a fencing token");
			}
			return token;
		}

		/** Let the sale write. Idempotent; call it in a {@code finally}. */
		public void resume() {
			this.resumed.countDown();
		}

		private void hold(@Nullable Long token) throws InterruptedException {
			this.fencingToken = token;
			this.reached.countDown();
			if (!this.resumed.await(MAX_PAUSE.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("The paused sale of '" + this.sku + "' was never resumed");
			}
		}

	}

}
