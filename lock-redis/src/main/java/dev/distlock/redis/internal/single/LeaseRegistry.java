package dev.distlock.redis.internal.single;

import java.util.List;
import java.util.concurrent.ExecutorService;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.redis.internal.lease.EngineRegistry;

import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.util.Assert;

/**
 * The single-node engine's {@link EngineRegistry}: the leases this process holds, of every lock mode, and their
 * losses, including those their holders find.
 */
public final class LeaseRegistry extends EngineRegistry<LeaseEntry> {

	public LeaseRegistry(List<LockListener> listeners, @Nullable ApplicationEventPublisher eventPublisher,
			ExecutorService events) {
		super(LogFactory.getLog("dev.distlock.redis.RedisLockService"), listeners, eventPublisher, events);
	}

	/** The exclusive lease {@code owner} holds on {@code redisKey}, or null. */
	@Nullable LeaseEntry heldBy(String redisKey, LockOwner owner) {
		return heldBy(redisKey, owner, LockMode.EXCLUSIVE);
	}

	/** The holder found its lease gone: record the loss (announcing it once) and return its event. */
	LockLostEvent lostOnHolderCheck(LeaseEntry entry) {
		LockLostEvent event = entry.markLostByHolder();
		if (event != null) {
			announceLost(entry, event);
			return event;
		}
		LockLostEvent earlier = entry.lostEvent();
		Assert.state(earlier != null, "A lost lease has an event");
		return earlier;
	}

}
