package dev.distlock.reactive;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.core.LogSafe;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a {@link ReactiveLockService} stream does with the leases it acquired: watch for their loss while the work runs,
 * and release them when it ends, without blocking, by how it ended.
 */
final class ReactiveLeases {

	private static final Log logger = LogFactory.getLog(ReactiveLockService.class);

	/** The release of one lease: {@link ReactiveLockService#release(Lease)}. */
	private final Function<Lease, Mono<Void>> release;

	ReactiveLeases(Function<Lease, Mono<Void>> release) {
		this.release = release;
	}

	/**
	 * {@code work} until one of the leases is found lost: then the work is cancelled and the stream fails with
	 * {@link LockLostException}. ({@code takeUntilOther} with a publisher that fails would fail the stream but leave the
	 * work running: Reactor cancels the source only when the other publisher emits, so the loss is turned into an
	 * emission here, and back into the failure after the source was cancelled.)
	 */
	static <T> Flux<T> untilLost(Flux<T> work, List<Lease> leases) {
		AtomicReference<@Nullable LockLostException> loss = new AtomicReference<>();
		return work.takeUntilOther(lossSignal(leases, loss)).concatWith(Mono.defer(() -> failIfLost(loss)));
	}

	/** {@code work} until one of the leases is found lost, as {@link #untilLost(Flux, List)}. */
	static <T> Mono<T> untilLost(Mono<T> work, List<Lease> leases) {
		AtomicReference<@Nullable LockLostException> loss = new AtomicReference<>();
		return work.takeUntilOther(lossSignal(leases, loss)).switchIfEmpty(Mono.defer(() -> failIfLost(loss)));
	}

	/** Emits once one of the leases is found lost, after keeping the failure in {@code loss}; never otherwise. */
	private static Mono<Boolean> lossSignal(List<Lease> leases, AtomicReference<@Nullable LockLostException> loss) {
		return lossOf(leases).then(Mono.just(Boolean.FALSE)).onErrorResume(LockLostException.class, (ex) -> {
			loss.set(ex);
			return Mono.just(Boolean.TRUE);
		});
	}

	private static <T> Mono<T> failIfLost(AtomicReference<@Nullable LockLostException> loss) {
		LockLostException lost = loss.get();
		return (lost != null) ? Mono.error(lost) : Mono.empty();
	}

	/** Fails when one of the leases is found lost; never completes otherwise. */
	static Mono<Void> lossOf(List<Lease> leases) {
		return Mono.create((sink) -> {
			AtomicBoolean open = new AtomicBoolean(true);
			sink.onDispose(() -> open.set(false));
			for (Lease lease : leases) {
				try {
					lease.onLost((event) -> {
						if (open.compareAndSet(true, false)) {
							sink.error(new LockLostException(event));
						}
					});
				}
				catch (UnsupportedOperationException ex) {
					// the engine cannot tell: a loss shows at the release instead
					if (logger.isDebugEnabled()) {
						logger.debug("A loss of lock '" + LogSafe.escape(lease.key()) + "' shows only at its release: "
								+ ex.getMessage());
					}
				}
			}
		});
	}

	/** On completion: a lost lease fails the stream; an unreachable store is logged (the lease expires). */
	Mono<Void> onComplete(List<Lease> leases) {
		return Mono.defer(() -> {
			List<Throwable> failures = new ArrayList<>();
			return each(leases, failures).then(Mono.defer(() -> {
				Throwable first = null;
				for (Throwable failure : failures) {
					if (failure instanceof LockUnavailableException unavailable) {
						logger.warn("Could not release lock '" + LogSafe.escape(unavailable.getKey())
								+ "'; it expires at the end of its lease time", unavailable);
					}
					else if (first == null) {
						first = failure;
					}
					else {
						first.addSuppressed(failure);
					}
				}
				return (first != null) ? Mono.error(first) : Mono.empty();
			}));
		});
	}

	Mono<Void> onError(List<Lease> leases, Throwable error) {
		return quietly(leases, error);
	}

	Mono<Void> onCancel(List<Lease> leases) {
		return quietly(leases, null);
	}

	/** Release all, attaching failures to {@code error} (or logging them when there is none). */
	Mono<Void> quietly(List<Lease> leases, @Nullable Throwable error) {
		return Mono.defer(() -> {
			List<Throwable> failures = new ArrayList<>();
			return each(List.copyOf(leases), failures).then(Mono.fromRunnable(() -> {
				for (Throwable failure : failures) {
					if (error != null) {
						if (failure != error) {
							error.addSuppressed(failure);
						}
					}
					else if (logger.isDebugEnabled()) {
						logger.debug("Release after a cancellation failed: " + failure.getMessage());
					}
				}
			}));
		});
	}

	/** Release in reverse order, each once, collecting failures instead of stopping at the first. */
	private Mono<Void> each(List<Lease> leases, List<Throwable> failures) {
		List<Lease> reversed = new ArrayList<>(leases);
		Collections.reverse(reversed);
		return Flux.fromIterable(reversed).concatMap((lease) -> this.release.apply(lease).onErrorResume((ex) -> {
			synchronized (failures) {
				failures.add(ex);
			}
			return Mono.empty();
		}), 0).then();
	}

	/** A lease nobody holds anymore (its acquisition was cancelled): released in the background. */
	static void detached(Lease lease) {
		lease.releaseAsync().whenComplete((ignored, failure) -> {
			if (failure != null && logger.isDebugEnabled()) {
				logger.debug("Release of lock '" + LogSafe.escape(lease.key())
						+ "' after a cancelled acquisition failed", failure);
			}
		});
	}

}
