/**
 * The scenarios that make sense on a real Redis, for a test of an application that runs on the Redis engine:
 * {@link dev.distlock.testing.redis.RedisLockScenarios}.
 */
@NullMarked
package dev.distlock.testing.redis;

import org.jspecify.annotations.NullMarked;
