/**
 * Spring Boot auto-configuration of the lock service and the {@code @DistributedLock} interceptor, and the
 * {@code lock.*} properties.
 */
@NullMarked
package dev.distlock.autoconfigure;

import org.jspecify.annotations.NullMarked;
