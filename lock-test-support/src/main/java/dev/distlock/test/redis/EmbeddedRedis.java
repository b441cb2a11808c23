package dev.distlock.test.redis;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes {@link RedisServerExtension} inject a server running the binary shipped in the
 * embedded-redis jar ({@link RedisBinary#embedded()}) instead of the detected one, so a test can
 * pin that fallback path. Put it on a {@link RedisServer} parameter, a method or a test class
 * (enclosing classes of {@code @Nested} classes count too).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.PARAMETER, ElementType.METHOD, ElementType.TYPE})
public @interface EmbeddedRedis {
}
