/**
 * The machinery behind {@link dev.distlock.annotation.DistributedLock @DistributedLock}: an operation source that
 * parses and validates each annotated method once, a SpEL evaluator for keys, a thin interceptor, and the advising
 * bean post-processor that puts the interceptor in front of annotated beans, with or without AspectJ.
 */
@NullMarked
package dev.distlock.interceptor;

import org.jspecify.annotations.NullMarked;
