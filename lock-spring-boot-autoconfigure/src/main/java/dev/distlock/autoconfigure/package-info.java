/**
 * Spring Boot auto-configuration of the Redis lock service, the {@code @DistributedLock} interceptor (on any lock
 * service), the observation of acquisitions, the operator views, and the {@code distlock.*} properties.
 */
@NullMarked
package dev.distlock.autoconfigure;

import org.jspecify.annotations.NullMarked;
