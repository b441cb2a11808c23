package dev.distlock.testing.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.PropertyMapping;

/**
 * Runs the test's application context on the in-memory lock engine instead of Redis: one
 * {@link dev.distlock.testing.InMemoryLockService} bean (the Redis engine backs off, as it does for any
 * {@code LockService} bean of the application's), its {@link dev.distlock.testing.InMemoryLockStore}, and the
 * {@link dev.distlock.testing.LockScenarios} for the test to inject. Everything else of the starter works on it
 * unchanged: {@code @DistributedLock} with its startup validation, the meters, the {@code locks} endpoint and the
 * health indicator. No Redis is needed: the starter never connects to Redis in this mode (the application's own use of
 * Redis is its own). The scenarios start afresh before each test method: other instances' holds released, Redis
 * answering, the history empty.
 * <p>
 * For a {@code @SpringBootTest}, and for a test slice ({@code @WebMvcTest} and others), to which it also brings the
 * {@code @DistributedLock} support. Without Spring, use {@code dev.distlock.testing.junit.InMemoryLocksExtension}.
 *
 * <pre class="code">
 * &#64;SpringBootTest
 * &#64;AutoConfigureInMemoryLocks
 * class InventoryServiceTests {
 *
 *     &#64;Autowired InventoryService inventory;
 *     &#64;Autowired LockScenarios locks;
 *
 *     &#64;Test
 *     void busyWhileAnotherInstanceHoldsTheSku() {
 *         locks.holdElsewhere("inventory:sku-42", Duration.ofSeconds(5));
 *         assertThatExceptionOfType(LockAcquisitionTimeoutException.class)
 *             .isThrownBy(() -&gt; inventory.purchase("sku-42", 1));
 *     }
 * }
 * </pre>
 *
 * @since 0.1.0
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
@PropertyMapping(value = "distlock.in-memory", skip = PropertyMapping.Skip.ON_DEFAULT_VALUE)
public @interface AutoConfigureInMemoryLocks {

	/**
	 * Whether the engine's time stands still until the test moves it with
	 * {@link dev.distlock.testing.LockScenarios#advance}: lease times run out and waits end exactly then, however slow
	 * the machine. A {@code @DistributedLock} call that has to wait then waits until the test advances the clock (from
	 * another thread). Default false: the system clock, on which waits take the time they say.
	 * @return whether the clock is manual
	 */
	boolean manualClock() default false;

}
