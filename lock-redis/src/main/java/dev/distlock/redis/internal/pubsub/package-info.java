/**
 * Internal: no compatibility promise. The Redis engine's pub/sub connection layer: one {@link PubSubConnection} per
 * lock service, which opens the connection, subscribes and unsubscribes channels, tells whether its transport is up,
 * and hands what it hears to {@link SubscriptionConnection.Events}. The implementations: Spring Data's listener
 * container ({@link ContainerSubscriptionConnection}), the engine's own connection ({@link SubscriptionConnection}),
 * and sharded pub/sub on a Redis Cluster ({@link ShardedSubscriptions}, through Lettuce or Jedis).
 * <p>
 * Why a package of its own: it knows connections and channels, never leases, waiters or what a message means, so it
 * depends on nothing else of the engine (ArchitectureTests holds it to that); the waiting side
 * ({@code dev.distlock.redis.ReleaseSubscriber} and the channels' upkeep) uses it. Its types are public only so that
 * the engine's package can reach them: they are left out of the Javadoc jar and of the API compatibility check, and
 * may change in any release.
 */
@NullMarked
package dev.distlock.redis.internal.pubsub;

import org.jspecify.annotations.NullMarked;
