package dev.distlock.observability;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;

/** An annotated bean for the observability tests: one lock name, any number of keys. */
public class Catalog {

	/** Counted down when {@link #hold(String)} holds its lock; the call then waits for {@link #release}. */
	public volatile CountDownLatch entered = new CountDownLatch(1);

	public volatile CountDownLatch release = new CountDownLatch(0);

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
