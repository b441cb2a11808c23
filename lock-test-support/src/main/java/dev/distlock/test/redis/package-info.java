/**
 * Test harness that runs real {@code redis-server} processes on free loopback ports.
 *
 * <p>Integration, fault and benchmark tests need a Redis they can stop, restart and freeze
 * (SIGSTOP) at will, without Docker and without touching a shared Redis on port 6379. Start one
 * with {@link dev.distlock.test.redis.RedisServer#start()}, share one per JVM with
 * {@link dev.distlock.test.redis.RedisServer#shared()}, or inject one into JUnit tests with
 * {@link dev.distlock.test.redis.RedisServerExtension}. For cluster- and sentinel-aware code,
 * {@link dev.distlock.test.redis.RedisCluster} (3 masters, 3 replicas) and
 * {@link dev.distlock.test.redis.RedisSentinelSet} (master, replica, 3 sentinels) build real
 * topologies that can lose a node and fail over; inject them with
 * {@link dev.distlock.test.redis.RedisTopologyExtension}. Put a
 * {@link dev.distlock.test.redis.FaultProxy} between a client and a server to inject latency,
 * partitions, lost replies and resets. {@link dev.distlock.test.redis.CompatibilityServer} finds the servers of the
 * compatibility matrix that only a folder beside the repository has (Redis 7.2.4, Valkey 8.0.1), and skips a test
 * that needs one where that folder is absent.
 */
@NullMarked
package dev.distlock.test.redis;

import org.jspecify.annotations.NullMarked;
