/**
 * The REST API of the inventory sample, with RFC 9457 problem details for every error.
 */
@NullMarked
package dev.distlock.sample.inventory.web;

import org.jspecify.annotations.NullMarked;
