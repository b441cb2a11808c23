/**
 * What the application's Redis user may do: a classifier that tells authentication, permission (ACL) and TLS errors
 * apart from outages, and the startup preflight that checks every permission the lock engine needs.
 */
@NullMarked
package dev.distlock.preflight;

import org.jspecify.annotations.NullMarked;
