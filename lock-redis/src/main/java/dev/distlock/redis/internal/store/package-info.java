/**
 * Internal: no compatibility promise. The Redis engine's store: the one door to Redis, above the scripts and their
 * protocol ({@code dev.distlock.redis.internal.script}). One call per lease operation ({@link LeaseStore}, with
 * {@link ReadWriteStore} and {@link FairStore} for the other kinds), the watchdog's renewals in batches
 * ({@link RenewalBatches}), the scan of the keys a listing reads ({@link StoreScan}, a {@link ListingSource}), who
 * holds a key ({@link HolderQuery}), which wire release messages take ({@link ReleaseTopology}), and what a failure
 * of Redis means ({@link RedisFailures}). Each goes through Spring Data's template, or, with Lettuce, the Lettuce-native path
 * ({@link NativeScripts}, {@link LettuceScripts}, {@link LettuceRenewals}, {@link LettuceWait}) that fails the same
 * way (Spring's {@code DataAccessException}).
 * <p>
 * Why a package of its own: it knows Redis, its replies and its failures, never a lease's life in this process, a
 * waiter or a lock kind. What it needs of a lease or an acquisition it reads through {@link StoredLease} and
 * {@link StoredAttempt}, which the engine's classes implement; what an acquisition must remember of a call the caller
 * marks. So it depends on nothing else of the engine but the scripts (ArchitectureTests holds it to that), and can be
 * read knowing only them. Its types are public only so that the engine's packages above can use them: they are left
 * out of the Javadoc jar and of the API compatibility check, and may change in any release.
 */
@NullMarked
package dev.distlock.redis.internal.store;

import org.jspecify.annotations.NullMarked;
