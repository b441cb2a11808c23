/**
 * The one-command demo ({@code ./demo.sh}): starts Redis and several app instances as separate JVMs, drives
 * concurrent purchases across them in each lock mode, and prints what was sold and oversold. A dev tool beside the
 * sample, not part of it: each instance runs the sample's application unchanged, through {@link DemoInstance}.
 */
@NullMarked
package dev.distlock.sample.inventory.demo;

import org.jspecify.annotations.NullMarked;
