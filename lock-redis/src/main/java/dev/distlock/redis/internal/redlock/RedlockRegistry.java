package dev.distlock.redis.internal.redlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.redis.internal.lease.EngineRegistry;
import dev.distlock.redis.internal.lease.LeaseRecord;

import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;

/**
 * The Redlock engine's {@link EngineRegistry}: the leases this process holds on a quorum (what a re-entry re-enters,
 * what the watchdog renews, what operators see), exclusive ones only, and their losses.
 */
public final class RedlockRegistry extends EngineRegistry<RedlockEntry> implements AutoCloseable {

	public RedlockRegistry(List<LockListener> listeners, @Nullable ApplicationEventPublisher eventPublisher,
			ExecutorService events) {
		super(LogFactory.getLog("dev.distlock.redis.RedlockRegistry"), listeners, eventPublisher, events);
	}

	/** {@return the lease the current {@link LockOwner} holds on {@code redisKey}, or null} */
	@Nullable RedlockEntry heldByCurrentOwner(String redisKey) {
		RedlockEntry entry = heldBy(redisKey, LockOwner.current(), LockMode.EXCLUSIVE);
		return (entry != null && entry.state() == LeaseRecord.State.HELD) ? entry : null;
	}

	/** Mark {@code entry} lost and announce it, once. */
	void lose(RedlockEntry entry, LockLostEvent.Detection detection) {
		LockLostEvent event = entry.markLost(detection);
		if (event != null) {
			announceLost(entry, event);
		}
	}

	/**
	 * Stop the events thread and give what was announced before up to two seconds to be delivered, as this engine
	 * always did (the single-node engine's close does not wait).
	 */
	@Override
	public void close() {
		super.close();
		awaitEvents(Duration.ofSeconds(2));
	}

}
