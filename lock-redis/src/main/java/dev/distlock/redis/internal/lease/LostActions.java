package dev.distlock.redis.internal.lease;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LogSafe;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Lease#onLost} actions of the holds of one lease, kept by its entry and run once by the registry's
 * announcement of the loss.
 * <p>
 * Invariants (guarded by {@code this}): once {@link #fire} has taken the actions, {@code fired} is set and no action
 * is added again; an action added before is either taken by {@code fire} (and run exactly once) or dropped with its
 * hold's release, never both. An action added after the loss is not kept: its caller runs it at once.
 */
final class LostActions {

	private static final Log logger = LogFactory.getLog("dev.distlock.redis.LostActions");

	/** Created with the first action: most leases never get one, and their release then drops nothing. */
	private @Nullable List<Registered> actions;

	private @Nullable LockLostEvent fired;

	/**
	 * Keep {@code action} for the loss of {@code hold}'s lease; returns null, or the loss already announced, in which
	 * case the action was not kept and the caller runs it.
	 */
	synchronized @Nullable LockLostEvent add(Object hold, Consumer<LockLostEvent> action) {
		if (this.fired != null) {
			return this.fired;
		}
		List<Registered> kept = this.actions;
		if (kept == null) {
			kept = new ArrayList<>(1);
			this.actions = kept;
		}
		kept.add(new Registered(hold, action));
		return null;
	}

	/**
	 * {@link Lease#onLost} of {@code hold}, which counts as released once {@code released} is set: {@code action} is
	 * kept, or run at once when the loss was announced already, and not kept past the hold's release.
	 */
	void register(Object hold, AtomicBoolean released, String key, Consumer<LockLostEvent> action) {
		if (action == null) {
			throw new IllegalArgumentException("The lost-lease action of lock '" + LogSafe.escape(key)
					+ "' must not be null");
		}
		if (released.get()) {
			return; // released first: it never runs
		}
		LockLostEvent lost = add(hold, action);
		if (lost != null) {
			runOne(action, lost);
		}
		else if (released.get()) {
			drop(hold); // released while registering
		}
	}

	/** {@code hold} was released: its actions never run. */
	synchronized void drop(Object hold) {
		if (this.actions != null) {
			this.actions.removeIf(registered -> registered.hold == hold);
		}
	}

	/** The lease was lost: take the actions to run (none if the loss was announced already). */
	synchronized List<Consumer<LockLostEvent>> fire(LockLostEvent event) {
		if (this.fired != null) {
			return List.of();
		}
		this.fired = event;
		List<Registered> kept = this.actions;
		if (kept == null) {
			return List.of();
		}
		List<Consumer<LockLostEvent>> taken = kept.stream().map(Registered::action).toList();
		kept.clear();
		return taken;
	}

	/**
	 * Run the actions of a loss on {@code executor} (an engine thread, so that a slow action delays no renewal), or on
	 * the calling thread when the executor was shut down with its service.
	 */
	static void run(List<Consumer<LockLostEvent>> actions, LockLostEvent event, Executor executor) {
		if (actions.isEmpty()) {
			return;
		}
		Runnable task = () -> actions.forEach(action -> runOne(action, event));
		try {
			executor.execute(task);
		}
		catch (RejectedExecutionException ex) {
			task.run();
		}
	}

	static void runOne(Consumer<LockLostEvent> action, LockLostEvent event) {
		try {
			action.accept(event);
		}
		catch (RuntimeException ex) {
			logger.warn("A lost-lease action of lock '" + LogSafe.escape(event.key()) + "' failed", ex);
		}
	}

	private record Registered(Object hold, Consumer<LockLostEvent> action) {
	}

}
