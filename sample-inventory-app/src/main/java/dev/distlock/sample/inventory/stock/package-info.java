/**
 * Stock and orders of a SKU in Redis, and the purchase that reads, checks and writes them back: under the distributed
 * lock with a fenced write, under a JVM-local lock, or with no lock at all.
 */
@NullMarked
package dev.distlock.sample.inventory.stock;

import org.jspecify.annotations.NullMarked;
