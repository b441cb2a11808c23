/**
 * The Redis engine: leases as hashes under {@code <prefix>:{<key>}}, one Lua script per operation, a fencing token
 * kept in the lease itself, pub/sub waiting on a shared listener connection, and one watchdog per service.
 */
@NullMarked
package dev.distlock.redis;

import org.jspecify.annotations.NullMarked;
