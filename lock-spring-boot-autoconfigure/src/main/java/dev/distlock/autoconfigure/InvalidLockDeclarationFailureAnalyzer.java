package dev.distlock.autoconfigure;

import dev.distlock.core.LockSettings;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns an {@link InvalidLockDeclarationException} into the "APPLICATION FAILED TO START" report: which method, which
 * attribute, what is wrong with it, and what to do about it, in place of a stack trace through bean creation.
 */
class InvalidLockDeclarationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLockDeclarationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidLockDeclarationException cause) {
		String method = cause.getMethod();
		if (method == null) {
			return new FailureAnalysis("A @DistributedLock declaration cannot work: " + cause.getMessage(),
					"Correct the @DistributedLock declaration, or remove it.", cause);
		}
		StringBuilder description = new StringBuilder("A @DistributedLock declaration cannot work:\n\n");
		description.append("    Method: ").append(method).append('\n');
		if (cause.getAttribute() != null) {
			description.append("    Attribute: ").append(cause.getAttribute()).append('\n');
		}
		description.append("    Problem: ").append(cause.getProblem());
		return new FailureAnalysis(description.toString(), action(method, cause.getAttribute()), cause);
	}

	private static String action(String method, @Nullable String attribute) {
		if (attribute == null) {
			return "Make " + method + " a public, non-static, non-final method with a synchronous, CompletableFuture or "
					+ "CompletionStage return type, so that a Spring proxy can hold the lock around it (or until its "
					+ "future completes), or remove @DistributedLock from it. To lock other asynchronous work, call "
					+ "LockService.execute inside that work.";
		}
		return switch (attribute) {
			case "key" -> "Correct the key expression of " + method + ". It is SpEL over the method's parameters "
					+ "(#name, #p0, #a0), #root.method, #root.target and beans (@name); parameter names need the "
					+ "compiler's -parameters flag, #p0 works without it.";
			case "ttl" -> "Give 'ttl' of " + method + " a duration of at least 1ms, such as \"30s\", \"500ms\" or "
					+ "\"PT2S\", or a ${...} placeholder that resolves to one; leave it empty to use distlock.default-ttl.";
			case "waitTime" -> "Give 'waitTime' of " + method + " a duration of 0 or more, such as \"5s\", \"500ms\" "
					+ "or \"0\" (try once), or a ${...} placeholder that resolves to one; leave it empty to use "
					+ "distlock.default-wait-time.";
			case "holdAtLeast" -> "Give 'holdAtLeast' of " + method + " a duration of 0 or more, such as \"55s\", or a "
					+ "${...} placeholder that resolves to one (empty or 0: none), and set waitTime = \"0\" beside it: "
					+ "a scheduled job declares waitTime = \"0\" and onFailure = SKIP.";
			case "maxHold" -> "Give 'maxHold' of " + method + " a duration of at least its lease time ('ttl', else "
					+ "distlock.default-ttl) and at most 365 days, such as \"10m\", or a ${...} placeholder that "
					+ "resolves to one; leave it empty to use distlock.max-hold (none when unset), or shorten the ttl.";
			case "permits" -> "Give 'permits' of " + method + " the number of callers the key admits at once, from 1 "
					+ "to " + LockSettings.MAX_PERMITS + " (0, the default, makes a lock), and leave 'fair', 'mode' "
					+ "and 'holdAtLeast' at their defaults beside it: a semaphore is a lock kind of its own.";
			case "mode" -> "Declare on " + method + " a lock mode the lock service takes, or use a lock service that "
					+ "takes it: the Redlock engine (distlock.redlock.nodes) takes exclusive locks only, and so does the "
					+ "Redis engine with distlock.replica-acks.";
			case "failureHandler" -> "Name in 'failureHandler' of " + method + " a bean that implements "
					+ "dev.distlock.annotation.LockFailureHandler, or define one with that name; and set either "
					+ "'failureHandler' or 'onFailure', not both.";
			default -> "Correct '" + attribute + "' of the @DistributedLock declaration on " + method + ".";
		};
	}

}
