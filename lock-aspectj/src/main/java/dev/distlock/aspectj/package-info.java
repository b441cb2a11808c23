/**
 * AspectJ mode of {@link dev.distlock.annotation.DistributedLock @DistributedLock}: an aspect woven into the annotated
 * classes at compile time or load time, which runs the same interceptor as the proxies of the default mode, so that a
 * bean's calls to its own locked methods are locked too.
 */
@NullMarked
package dev.distlock.aspectj;

import org.jspecify.annotations.NullMarked;
