package dev.distlock.redis.internal.support;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** Exponential backoff with jitter between calls that Redis did not answer. */
public final class Backoff {

	private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

	private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

	private long next = MIN_BACKOFF_NANOS;

	public long nextNanos() {
		long current = this.next;
		this.next = Math.min(MAX_BACKOFF_NANOS, current * 2);
		return current / 2 + ThreadLocalRandom.current().nextLong(current / 2 + 1);
	}

	public void reset() {
		this.next = MIN_BACKOFF_NANOS;
	}

}
