package dev.distlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.distlock.core.LockMode;

import org.springframework.core.annotation.AliasFor;

/**
 * Runs the annotated method only while holding a distributed lock on the key its {@link #key()} expression yields:
 * one caller at a time across every instance of the application that shares the Redis server and key prefix.
 * <pre>{@code
 * @DistributedLock(key = "'inventory:' + #sku", ttl = "10s", waitTime = "2s")
 * public Receipt purchase(String sku, int quantity) { ... }
 * }</pre>
 * The lock wraps the whole call, including a {@code @Transactional} on the same method, so the transaction commits (or
 * rolls back) before the next holder gets in. It is reentrant: a nested annotated call on the same key from the same
 * thread re-enters it. Inside the method, {@link LockContext#current()} gives the lease and its fencing token. With
 * {@link #permits() permits = N} the key admits up to N callers at once instead of one, each holding a permit that is
 * a lease of its own.
 * <p>
 * On a method that returns a {@code CompletableFuture} or {@code CompletionStage} (an {@code @Async} method, say) the
 * lock is taken before the method runs and held until the returned future completes; re-entry then follows the
 * invocation rather than the thread, and the future the caller gets completes once the lock is released.
 * <p>
 * Usable as a meta-annotation: a team may declare {@code @InventoryLock} annotated with {@code @DistributedLock}, and
 * redeclare attributes with {@link AliasFor}.
 * <p>
 * The expressions, durations and failure handler are checked when the application context starts; a mistake fails the
 * start with a message naming the method and the attribute.
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

	/**
	 * Alias for {@link #key()}.
	 * @return the SpEL expression for the lock key
	 */
	@AliasFor("key")
	String value() default "";

	/**
	 * A SpEL expression for the lock key, over the method's arguments ({@code #sku}, {@code #order.id}, {@code #p0},
	 * {@code #a0}), {@code #root.method}, {@code #root.target}, {@code #root.args} and beans ({@code @pricing.region()}).
	 * A result that is a collection or an array locks every element, acquired in sorted order, all or none. A key that
	 * evaluates to null, a blank string or an empty collection fails the call before the method runs.
	 * @return the SpEL expression for the lock key
	 */
	@AliasFor("value")
	String key() default "";

	/**
	 * The name that groups this lock in metrics and logs; keys are unbounded, names are not. Defaults to
	 * {@code SimpleClassName.method}.
	 * @return the lock's name, or empty for the default
	 */
	String name() default "";

	/**
	 * The lease time, as a duration in Spring Boot's format ({@code "30s"}, {@code "500ms"}, {@code "PT2S"}) or a
	 * {@code ${...}} placeholder that resolves to one. Empty means {@code distlock.default-ttl}. With the default
	 * {@link #fixedLease() renewal}, the watchdog renews the lease every ttl × {@code distlock.renewal-ratio} while the
	 * method runs, so the ttl only bounds how long a crashed instance blocks the key. At least 1ms and at most 365 days
	 * (beyond it Redis's expiry may overflow); another value fails the start, naming the method.
	 * @return the lease time, or empty for the default
	 */
	String ttl() default "";

	/**
	 * How long to wait for the lock when another caller holds it, in the same format as {@link #ttl()}; {@code "0"}
	 * tries once. Empty means {@code distlock.default-wait-time}. ({@code wait} itself cannot be an annotation attribute
	 * in Java: it would clash with {@link Object#wait()}.)
	 * @return the longest wait for the lock, or empty for the default
	 */
	String waitTime() default "";

	/**
	 * The longest time a call holds its lock, a cap on runaway holders (a wedged call, an endless loop), in the same
	 * format as {@link #ttl()}. Empty means {@code distlock.max-hold}, and none when that is not set. Counted from the
	 * acquisition (a nested call on the same key re-enters the lease and does not restart it; the outermost call's cap
	 * rules). Once the lease has been held that long the watchdog stops renewing it and the lease is lost
	 * ({@code LockLostEvent.Detection.MAX_HOLD_EXCEEDED}: the event, the {@code distlock.lock.lost} meter's
	 * {@code detection} tag, {@code LockLostException} when the method returns, or the warning of
	 * {@code distlock.on-lost-lease=log}), and the call is told: the thread running a blocking method is interrupted
	 * when {@code distlock.max-hold-interrupt} is true (never otherwise); the future of a {@code CompletableFuture}
	 * method is cancelled; a reactive method's {@code Mono}/{@code Flux} (and a Kotlin {@code suspend} function, which
	 * runs through the same path) fails with {@code LockLostException} and its work is cancelled. What Redis still has
	 * of the lease lapses within one lease time, or goes at the release; the call must not rely on it after the loss.
	 * At least the lease time ({@link #ttl()}, or {@code distlock.default-ttl} when the declaration sets none) and at
	 * most 365 days; another value fails the start, naming the method.
	 * @return the longest hold, or empty for {@code distlock.max-hold}
	 * @since 0.7.0
	 */
	String maxHold() default "";

	/**
	 * For scheduled jobs (ShedLock's {@code lockAtLeastFor}): once a call has acquired the lock, no other call of a
	 * {@code holdAtLeast} declaration on the same key gets it again until this long after that acquisition, even when
	 * the method finished much sooner. So an {@code @Scheduled} method declared with {@code waitTime = "0"},
	 * {@code onFailure = SKIP} and a {@code holdAtLeast} of a little less than its period runs at most once per period
	 * across every instance, even when it takes a millisecond and the instances' clocks differ by seconds (the window
	 * is timed by Redis, not by the instances' clocks). Same format as {@link #ttl()}; empty or {@code "0"} means none.
	 * <p>
	 * The window is a second, fixed lease on the key {@code <key>:held-at-least}, taken right after the lock: the lock
	 * itself is released when the method returns, as always (a method without {@code holdAtLeast} on the same key is not
	 * held off by the window), and the window lease expires by itself. A call that finds the window still open fails as
	 * one that did not get the lock ({@code SKIP} skips it). Only the outermost call of nested ones on the same key
	 * opens a window. It needs {@code waitTime = "0"}: a call that waited for the lock would find the window of the run
	 * it waited for, so a declaration with another wait fails the start, as does one longer than 365 days (the longest
	 * lease time).
	 * @return the shortest time between two acquisitions by {@code holdAtLeast} calls on the key, or empty for none
	 * @since 0.1.0
	 */
	String holdAtLeast() default "";

	/**
	 * Whether the lease is fixed: never renewed, so it expires at its ttl even if the method still runs (the method
	 * then finds {@link LockContext#current() its lease} no longer held, and the call ends with a lost-lease error).
	 * @return whether the lease is fixed
	 */
	boolean fixedLease() default false;

	/**
	 * Whether the lock is fair: callers of every instance queue in Redis and get the lock in the order they asked for
	 * it; a release hands the lease straight to the longest waiter. Costs a little more per uncontended acquisition
	 * than the default, where the waiter that asks first after a release wins. Exclusive with a {@link #mode()} of
	 * {@code READ} or {@code WRITE}: a declaration that sets both fails the start.
	 * @return whether the lock is fair
	 * @since 0.4.0
	 */
	boolean fair() default false;

	/**
	 * How the lock admits holders: {@code EXCLUSIVE} (the default: one caller at a time), or {@code READ} and
	 * {@code WRITE}, the two sides of a read-write lock on the key (many readers or one writer). A method holding the
	 * write lock may call one that takes the read lock of the same key; the other way round fails at once with a
	 * {@link IllegalStateException} rather than deadlocking. {@code FAIR} is the same as {@link #fair()}, and
	 * {@code PERMITS} is what {@link #permits()} sets (a declaration with {@code mode = PERMITS} must say how many).
	 * @return the lock mode
	 * @since 0.4.0
	 */
	LockMode mode() default LockMode.EXCLUSIVE;

	/**
	 * How many callers may hold the key at once across every instance: 0 (the default) makes a lock, not a semaphore;
	 * N from 1 to {@link dev.distlock.core.LockSettings#MAX_PERMITS} makes each call hold one of N permits of the key
	 * ({@link LockMode#PERMITS}), for limits such as "at most 5 concurrent calls to the partner API, fleet-wide":
	 * <pre>{@code
	 * @DistributedLock(key = "'partner-api'", permits = 5, ttl = "30s", waitTime = "2s")
	 * public Quote quote(Order order) { ... }
	 * }</pre>
	 * Each permit is a lease, with the ttl, renewal, {@link #maxHold()}, fencing token and loss of a lock's lease, so a
	 * crashed instance's permit comes back at its ttl. A nested call on the key by the same caller re-enters its permit
	 * and takes no second one. Every declaration (and {@code LockRequest}) on one key must ask for the same number while
	 * the key has holders: a call that asks for another number fails at once with an {@link IllegalStateException}
	 * naming the key and both numbers, rather than silently admitting more or fewer callers.
	 * <p>
	 * A number out of range, or permits combined with {@link #fair()}, a {@link #mode()} of {@code FAIR}, {@code READ}
	 * or {@code WRITE}, or {@link #holdAtLeast()} (its window spaces the runs of a key, one per window, whatever the
	 * permits), fails the start, naming the method and the attribute.
	 * @return the number of permits of the key, or 0 for a lock
	 * @since 0.8.0
	 */
	int permits() default 0;

	/**
	 * What to do when the lock is not acquired within the wait. Leave it at {@code THROW} when a
	 * {@link #failureHandler()} is set: the handler decides alone, and a declaration that sets both fails the start.
	 * @return what a call that did not get the lock does
	 */
	OnLockFailure onFailure() default OnLockFailure.THROW;

	/**
	 * The name of a {@link LockFailureHandler} bean that decides what a call that did not get the lock returns or
	 * throws. Checked when the application context starts, once every singleton exists: a name that is no bean, or a
	 * bean that is not a {@code LockFailureHandler}, fails the start. The handler may be defined anywhere in the
	 * configuration, and may be lazy: it is looked up on the first failure. Exclusive with {@link #onFailure()}: set
	 * one or the other.
	 * @return the handler bean's name, or empty for none
	 */
	String failureHandler() default "";

}
