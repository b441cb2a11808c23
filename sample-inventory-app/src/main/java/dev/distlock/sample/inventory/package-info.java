/**
 * The inventory sample: a Spring Boot web service that sells the same stock from several instances, with
 * {@link dev.distlock.annotation.DistributedLock @DistributedLock} around its read-modify-write, and a demo that
 * shows what happens without it.
 */
@NullMarked
package dev.distlock.sample.inventory;

import org.jspecify.annotations.NullMarked;
