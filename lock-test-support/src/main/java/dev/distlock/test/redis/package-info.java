/**
 * Test harness that runs real {@code redis-server} processes on free loopback ports.
 *
 * <p>Integration, fault and benchmark tests need a Redis they can stop, restart and freeze
 * (SIGSTOP) at will, without Docker and without touching a shared Redis on port 6379. Start one
 * with {@link dev.distlock.test.redis.RedisServer#start()}, share one per JVM with
 * {@link dev.distlock.test.redis.RedisServer#shared()}, or inject one into JUnit tests with
 * {@link dev.distlock.test.redis.RedisServerExtension}. Put a
 * {@link dev.distlock.test.redis.FaultProxy} between a client and a server to inject latency,
 * partitions, lost replies and resets.
 */
@NullMarked
package dev.distlock.test.redis;

import org.jspecify.annotations.NullMarked;
