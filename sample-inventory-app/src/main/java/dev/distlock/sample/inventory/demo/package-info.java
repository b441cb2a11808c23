/**
 * The one-command demo: starts Redis and several app instances as separate JVMs, drives concurrent purchases across
 * them in each lock mode, and prints what was sold and oversold.
 */
@NullMarked
package dev.distlock.sample.inventory.demo;

import org.jspecify.annotations.NullMarked;
