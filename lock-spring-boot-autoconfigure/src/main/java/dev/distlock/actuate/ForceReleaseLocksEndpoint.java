package dev.distlock.actuate;

import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LogSafe;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.util.Assert;

/**
 * The {@code locks} endpoint with a delete operation that force-releases a key whoever holds it
 * ({@code DELETE /actuator/locks/{key}}): for a holder that is stuck, when waiting for its lease to expire is not an
 * option. Only configured when {@code distlock.actuator.force-release.enabled=true}, on an engine that is a
 * {@link LockForceReleaser} as well as a {@link LockOperatorView} (the Redis engine is both).
 * <p>
 * Every use is logged at WARN (key, the former holders by their {@linkplain dev.distlock.core.HolderLabel labels} as
 * the lease stored them, how many holds, fencing token, caller; the key, the labels and the caller's name with their
 * control characters and line breaks escaped, as {@link dev.distlock.core.LogSafe} does) and published as
 * an {@link AuditApplicationEvent} of type {@value #AUDIT_EVENT_TYPE}, which Boot records when an audit event
 * repository is configured. The former holder (each reader of a read lock) finds its lease lost at its next renewal
 * or release, and its own instance's log names it then by its {@linkplain dev.distlock.core.HolderLabel label}.
 * <p>
 * The former owner ids are read from Redis, where nothing but the id says who held the lease, and they never reach
 * the log or the audit event: an owner id carries its instance's client id, and one seen used to tell the next ones.
 * The audit event has {@code formerOwner} and {@code formerOwners} {@value LocksEndpoint#MASK},
 * {@code formerHolders}, their number, and {@code formerHolderLabels}, their labels (escaped), as it has the fencing
 * token: a label names an application, an instance and a thread, nothing a client could present to the store. The
 * response shows the former owner ids, labels and fencing token as the read operation does
 * ({@code management.endpoint.locks.show-values}).
 *
 * @since 0.1.0
 */
@Endpoint(id = "locks")
public class ForceReleaseLocksEndpoint extends LocksEndpoint {

	/** The type of the audit event of a forced release. */
	public static final String AUDIT_EVENT_TYPE = "LOCK_FORCE_RELEASED";

	private static final Log logger = LogFactory.getLog(ForceReleaseLocksEndpoint.class);

	private final LockForceReleaser forceReleaser;

	private final @Nullable ApplicationEventPublisher eventPublisher;

	/**
	 * An endpoint over the given engine's leases, with the force-release operation.
	 * @param operatorView the engine whose leases are listed
	 * @param forceReleaser what releases them; usually the same engine
	 * @param eventPublisher where the audit event of each forced release goes; {@code null} for none
	 */
	public ForceReleaseLocksEndpoint(LockOperatorView operatorView, LockForceReleaser forceReleaser,
			@Nullable ApplicationEventPublisher eventPublisher) {
		this(operatorView, forceReleaser, eventPublisher, Show.WHEN_AUTHORIZED, Set.of());
	}

	/**
	 * An endpoint over the given engine's leases that may release them, with its own rule for showing owner ids and
	 * fencing tokens.
	 * @param operatorView the engine whose leases are listed
	 * @param forceReleaser what releases them; usually the same engine
	 * @param eventPublisher where audit events go
	 * @param showValues when owner ids and fencing tokens are shown
	 * @param roles the roles of which a caller needs one for {@link Show#WHEN_AUTHORIZED}; empty: any authenticated
	 * caller
	 */
	public ForceReleaseLocksEndpoint(LockOperatorView operatorView, LockForceReleaser forceReleaser,
			@Nullable ApplicationEventPublisher eventPublisher, Show showValues, Set<String> roles) {
		super(operatorView, showValues, roles);
		Assert.notNull(forceReleaser, "'forceReleaser' must not be null");
		this.forceReleaser = forceReleaser;
		this.eventPublisher = eventPublisher;
	}

	/**
	 * Delete the lease on the key (path segments after {@code /locks/}, joined by '/') and wake its waiters.
	 * @param key the path segments of the lock key
	 * @param securityContext the caller, named in the log line and the audit event
	 * @return what was released, or that the lock was free
	 */
	@DeleteOperation
	public ForceReleaseDescriptor forceRelease(@Selector(match = Match.ALL_REMAINING) String[] key,
			SecurityContext securityContext) {
		String lockKey = String.join("/", key);
		Principal principal = securityContext.getPrincipal();
		String caller = (principal != null) ? principal.getName() : "anonymous";
		Optional<ForcedRelease> released = this.forceReleaser.forceRelease(lockKey);
		// the key comes from the request's path: its line breaks must not forge log lines (nor the caller's name)
		String loggedKey = LogSafe.escape(lockKey);
		String loggedCaller = LogSafe.escape(caller);
		if (released.isEmpty()) {
			logger.warn("Force-release of lock '" + loggedKey + "' requested through the actuator by " + loggedCaller
					+ ": the lock was free, nothing released");
			audit(caller, lockKey, null);
			return new ForceReleaseDescriptor(lockKey, false, null, 0, null, List.of(), List.of());
		}
		ForcedRelease release = released.get();
		// the former holders by their labels and number, never by owner id (which names their instance and is read
		// from Redis); a label is text another process stored: escaped
		int holders = release.owners().size();
		String named = release.holders().isEmpty() ? ""
				: " " + String.join("; ", release.holders().stream().map(LogSafe::escape).toList());
		logger.warn("Force-released lock '" + loggedKey + "' through the actuator, requested by " + loggedCaller
				+ ((holders == 1) ? ": its holder" : ": its " + holders + " holders") + named + " ("
				+ release.holdCount() + " hold(s), fencing token " + release.fencingToken() + ") will find "
				+ ((holders == 1) ? "its lease lost" : "their leases lost"));
		audit(caller, lockKey, release);
		boolean show = showValues(securityContext);
		return new ForceReleaseDescriptor(lockKey, true, show ? release.owner() : MASK, release.holdCount(),
				show ? release.fencingToken() : MASK,
				show ? release.owners() : release.owners().stream().map(owner -> MASK).toList(),
				show ? release.holders() : release.holders().stream().map(holder -> MASK).toList());
	}

	private void audit(String caller, String key, @Nullable ForcedRelease release) {
		if (this.eventPublisher == null) {
			return;
		}
		Map<String, Object> data = new LinkedHashMap<>();
		data.put("key", key);
		data.put("released", release != null);
		if (release != null) {
			// masked always: an audit record is read by more people than may release leases
			data.put("formerOwner", MASK);
			data.put("formerOwners", release.owners().stream().map((owner) -> MASK).toList());
			data.put("formerHolders", release.owners().size());
			data.put("formerHolderLabels", release.holders().stream().map(LogSafe::escape).toList());
			data.put("holdCount", release.holdCount());
			data.put("fencingToken", release.fencingToken());
		}
		this.eventPublisher.publishEvent(new AuditApplicationEvent(caller, AUDIT_EVENT_TYPE, data));
	}

	/**
	 * What a forced release did.
	 *
	 * @param key the lock key
	 * @param released whether a lease was deleted ({@code false}: the key was free)
	 * @param formerOwner the owner id of the deleted lease (or {@value LocksEndpoint#MASK}): its writer, or one of the
	 * readers of a read lock
	 * @param holdCount the holds it had open, over all its holders
	 * @param fencingToken its fencing token, a number (or {@value LocksEndpoint#MASK})
	 * @param formerOwners every owner id that held it, {@code formerOwner} first (each {@value LocksEndpoint#MASK}):
	 * one, or the readers of a read lock
	 * @param formerHolders the labels the lease stored of those owners, in their order (each {@value LocksEndpoint#MASK}
	 * unless values are shown); an owner stored without a label is left out
	 */
	public record ForceReleaseDescriptor(String key, boolean released, @Nullable String formerOwner, long holdCount,
			@Nullable Object fencingToken, List<String> formerOwners, List<String> formerHolders) {

		/**
		 * A forced release described without the holders' labels (the form before labels were stored).
		 * @param key the lock key
		 * @param released whether a lease was deleted
		 * @param formerOwner the owner id named first (or masked)
		 * @param holdCount the holds it had open
		 * @param fencingToken its fencing token (or masked)
		 * @param formerOwners every owner id (or masked)
		 */
		public ForceReleaseDescriptor(String key, boolean released, @Nullable String formerOwner, long holdCount,
				@Nullable Object fencingToken, List<String> formerOwners) {
			this(key, released, formerOwner, holdCount, fencingToken, formerOwners, List.of());
		}

	}

}
