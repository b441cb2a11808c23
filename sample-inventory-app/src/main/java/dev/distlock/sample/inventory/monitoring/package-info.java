/**
 * What the sample does with the starter's signals: lost leases are logged and counted.
 */
@NullMarked
package dev.distlock.sample.inventory.monitoring;

import org.jspecify.annotations.NullMarked;
