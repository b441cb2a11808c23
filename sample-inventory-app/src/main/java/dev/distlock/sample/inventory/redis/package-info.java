/**
 * Starts a private {@code redis-server} for the sample when no Redis address is configured, so that
 * {@code spring-boot:run} and {@code java -jar} work on a machine without Redis.
 */
@NullMarked
package dev.distlock.sample.inventory.redis;

import org.jspecify.annotations.NullMarked;
