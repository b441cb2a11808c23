/**
 * The inventory sample: a Spring Boot web service that sells the same stock from several instances, with
 * {@link dev.distlock.annotation.DistributedLock @DistributedLock} around its read-modify-write (and the same purchase
 * with a JVM-local lock or none, which the demo in {@code sample-inventory-demo} runs side by side).
 */
@NullMarked
package dev.distlock.sample.inventory;

import org.jspecify.annotations.NullMarked;
