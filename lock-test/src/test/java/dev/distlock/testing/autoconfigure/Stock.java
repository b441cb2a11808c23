package dev.distlock.testing.autoconfigure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.annotation.DistributedLock;
import org.jspecify.annotations.Nullable;

/** A tiny locked service for the Spring tests: sells one unit of a SKU at a time, under the SKU's lock. */
public class Stock {

	private final Map<String, Integer> sold = new ConcurrentHashMap<>();

	private volatile @Nullable Runnable beforeWrite;

	/**
	 * Run {@code hook} once, before the next sale is written, inside the lock: a test's way into the middle of a call.
	 * A method, not a field, so that it reaches the target behind the lock's proxy.
	 */
	public void beforeNextWrite(Runnable hook) {
		this.beforeWrite = hook;
	}

	@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "${stock.wait-time:200ms}")
	public int sell(String sku) {
		Runnable hook = this.beforeWrite;
		if (hook != null) {
			this.beforeWrite = null;
			hook.run();
		}
		return this.sold.merge(sku, 1, Integer::sum);
	}

}
