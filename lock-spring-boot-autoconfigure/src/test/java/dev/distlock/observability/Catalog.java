package dev.distlock.observability;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;

/** An annotated bean for the observability tests: one lock name, any number of keys. */
public class Catalog {

	// reached through methods, never fields: a field of the (CGLIB) proxy is not the target's
	private volatile CountDownLatch entered = new CountDownLatch(1);

	private volatile CountDownLatch release = new CountDownLatch(0);

	/** Make the next {@link #hold(String)} call signal that it holds its lock and wait for {@link #release()}. */
	public void arm() {
		this.entered = new CountDownLatch(1);
		this.release = new CountDownLatch(1);
	}

	public boolean awaitEntered(long seconds) throws InterruptedException {
		return this.entered.await(seconds, TimeUnit.SECONDS);
	}

	public void release() {
		this.release.countDown();
	}

	@DistributedLock(key = "'item:' + #id", ttl = "20s", waitTime = "0")
	public long touch(int id) {
		return LockContext.current().map(Lease::fencingToken).orElseThrow();
	}

	@DistributedLock(key = "'item:' + #id", ttl = "20s", waitTime = "0", name = "catalog-hold")
	public String hold(String id) throws InterruptedException {
		this.entered.countDown();
		if (!this.release.await(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException("not released within 30 s");
		}
		return id;
	}

}
