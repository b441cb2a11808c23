package dev.distlock.testing.tck;

/**
 * The contract of a {@link dev.distlock.core.LockService}, for any engine (a TCK): extend this class in a test, say how
 * to make an instance of the engine ({@link #newInstance(Options)}), and JUnit runs the contract's tests against it.
 * Several instances made in one test stand for several application instances sharing one store (one Redis): they
 * must exclude each other.
 * <pre class="code">
 * class MyLockServiceTckTests extends LockServiceTck {
 *
 *     private final MyStore store = new MyStore();
 *
 *     &#64;Override
 *     protected LockService newInstance(Options options) {
 *         return new MyLockService(this.store, options.listeners(), options.eventPublisher());
 *     }
 *
 * }
 * </pre>
 * Only {@link #newInstance(Options)} is required. The other hooks have defaults for an engine on real time whose
 * instances are {@link AutoCloseable}: {@link #passTime(java.time.Duration)} and {@link #now()} (an engine on a clock
 * of the test's overrides them, and {@link #timeIsControlled()}, which adds exact checks of when leases expire and
 * waits end), {@link #shortTtl()} (the lease time of tests that let time pass), {@link #crash},
 * {@link #closeInstance}, {@link #loseLease} and {@link #supports}.
 * <p>
 * The tests, by topic, and what each topic needs of the engine (a test whose need the engine does not meet is skipped,
 * as a JUnit assumption):
 * <ul>
 * <li>mutual exclusion: instances exclude each other on a read-modify-write under concurrency, with fencing tokens
 * that grow with every holder; a lease is released through its owner from any thread, stays released, and
 * {@code execute}/{@code run} release what they took; blank keys are refused. Every engine.</li>
 * <li>re-entry: an owner re-enters its lease (same token, holds counted in the store) from every thread it is bound
 * to; the key is free after the last release. Every engine.</li>
 * <li>waiting: a wait of zero tries once; a wait ends at its deadline, on a release, on an interrupt
 * ({@code LockInterruptedException}, the interrupt status kept), or when a crashed holder's lease runs out. Every
 * engine.</li>
 * <li>lease time: a renewed lease outlives its lease time, a fixed one expires at it (found lost, {@code EXPIRED}, at
 * release); extensions add or replace, a replaced time is what the watchdog renews to; {@code validUntil}. Every
 * engine.</li>
 * <li>store queries: {@code isLocked}, {@code holder}, {@code isOwned}. Every engine.</li>
 * <li>lost leases: a lease gone from the store is found lost by its holder's question and by the watchdog, and told
 * through the listeners, the application event, {@code onLost} and {@code LockLostException}; a listener that throws
 * keeps neither the other listeners nor the engine from going on. An engine whose leases the test can make lost
 * ({@link #loseLease}; by default a {@link dev.distlock.core.LockForceReleaser}).</li>
 * <li>the longest hold ({@code maxHold}): a renewed lease is renewed until it has been held that long, then lost
 * ({@code MAX_HOLD_EXCEEDED}) and told as every loss; a re-entry neither restarts nor changes the cap; a cap under the
 * lease time is refused, naming the key. Every engine.</li>
 * <li>asynchronous acquisition: a wait without a thread, completed by a release or ended at its deadline; re-entry by
 * the owner passed in; cancelling abandons the wait and never leaves a lease held. An
 * {@link dev.distlock.core.AsyncLockService}.</li>
 * <li>fair locks: the key goes down the queue in the order of arrival. {@code FAIR} ({@link #supports}) and the fair
 * queue's length in the {@link dev.distlock.core.LockOperatorView}.</li>
 * <li>read-write locks: readers share, a writer excludes, a waiting writer keeps new readers out, a writer may read
 * (a downgrade), a reader may not write (an upgrade), tokens by phase. {@code READ} and {@code WRITE}.</li>
 * <li>permits: never more holders than permits across instances, n at once and the next refused, a release lets
 * waiters in, a re-entry takes no second permit, another number of permits refused at once naming the key and both
 * numbers, a crashed holder's permit back at its lease time, a token per holder, exclusion of the other modes, the
 * operator view and the listing. {@code PERMITS}; an engine without it must refuse it with an
 * {@link UnsupportedOperationException} naming the key (since 0.8.0).</li>
 * <li>the operator view: leases with their holds, listed oldest first; waiters and leases by name, only held leases
 * counted; lock names, an action that throws kept from the acquisition; healthy renewals; lost leases listed until
 * released; forced releases. A {@link dev.distlock.core.LockOperatorView} (and a
 * {@link dev.distlock.core.LockForceReleaser} for the forced release).</li>
 * </ul>
 * No test depends on the speed of the machine: waits have generous deadlines and end on latches or polls, never on
 * sleeps (only {@link #passTime(java.time.Duration)} sleeps, on real time, to let a lease or a wait run out), so the
 * suite passes on a loaded machine as on an idle one. Every test has a timeout of two minutes.
 *
 * @since 0.1.0
 */
public abstract class LockServiceTck extends OperatorViewTests {

	/** For subclasses, one per engine under test. */
	protected LockServiceTck() {
	}

}
