/**
 * Spring Boot Actuator support: the {@code locks} endpoint (the leases this instance holds, and an opt-in forced
 * release) and the {@code locks} health indicator (down while renewals of held leases fail).
 */
@NullMarked
package dev.distlock.actuate;

import org.jspecify.annotations.NullMarked;
