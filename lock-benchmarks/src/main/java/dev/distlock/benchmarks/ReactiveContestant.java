package dev.distlock.benchmarks;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockRequest;
import dev.distlock.reactive.ReactiveLockService;
import dev.distlock.redis.RedisLockService;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * This starter's reactive API: {@link ReactiveLockService#withLock} on the Redis engine's own non-blocking
 * acquisition ({@link RedisLockService} is an {@link dev.distlock.core.AsyncLockService}), default settings. Each
 * client is a separate engine on its own connection factory, as for {@link DistlockContestant}; scenario 2 runs its
 * critical sections as in-flight subscriptions rather than threads, so it is the only scenario it takes part in.
 */
final class ReactiveContestant implements Contestant {

	@Override
	public String name() {
		return "distlock reactive";
	}

	@Override
	public Kind kind() {
		return Kind.OURS;
	}

	@Override
	public Set<Scenario> scenarios() {
		return EnumSet.of(Scenario.HOT_KEY, Scenario.HOT_KEY_8X1);
	}

	@Override
	public Client open(Target target, Options options) {
		LettuceConnectionFactory factory = DistlockContestant.connectionFactory(target);
		RedisLockService service = RedisLockService.builder(factory).keyPrefix("bench-distlock-reactive").build();
		ReactiveLockService reactive = ReactiveLockService.of(service);
		if (reactive.getLockService() != service) {
			// a blocking engine behind threads would measure the adapter, not the engine's non-blocking acquisition
			reactive.close();
			service.close();
			factory.destroy();
			throw new IllegalStateException("RedisLockService no longer acquires asynchronously on its own");
		}
		return new ReactiveLockClient(factory, service, reactive, options.ttl(), options.waitTime());
	}

	private record ReactiveLockClient(LettuceConnectionFactory factory, RedisLockService service,
			ReactiveLockService reactive, Duration ttl, Duration waitTime) implements ReactiveClient {

		@Override
		public Mono<Boolean> lockedReactive(String key, Mono<?> criticalSection) {
			return this.reactive.withLock(LockRequest.of(key, this.ttl, this.waitTime), (lease) -> criticalSection)
				.then(Mono.just(true))
				.onErrorResume(LockAcquisitionTimeoutException.class, (ex) -> Mono.just(false));
		}

		@Override
		public boolean locked(String key, Runnable criticalSection) {
			Boolean locked = lockedReactive(key, Mono.fromRunnable(criticalSection)).block();
			return Boolean.TRUE.equals(locked);
		}

		@Override
		public long heldOrWaiting() {
			return DistlockContestant.heldOrWaitingIn(this.service);
		}

		@Override
		public void close() {
			this.reactive.close();
			this.service.close();
			this.factory.destroy();
		}

	}

}
