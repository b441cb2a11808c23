package dev.distlock.testing.junit;

import java.lang.reflect.Method;
import java.util.List;

import dev.distlock.core.LockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.InMemoryLockStore;
import dev.distlock.testing.LockClock;
import dev.distlock.testing.LockScenarios;
import dev.distlock.testing.ManualLockClock;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The in-memory engine for a JUnit Jupiter test without Spring: a fresh {@link InMemoryLockStore} for each test
 * method, with one {@link InMemoryLockService} on it (closed after the test) and its {@link LockScenarios}, handed to
 * the test method (and its {@code @BeforeEach} and {@code @AfterEach} methods) as parameters of these types:
 * {@link InMemoryLockService} (also as {@link LockService}), {@link LockScenarios}, {@link InMemoryLockStore},
 * {@link LockClock}, and {@link ManualLockClock} with a manual clock.
 *
 * <pre class="code">
 * &#64;ExtendWith(InMemoryLocksExtension.class)   // the system clock
 * class StockJobTests {
 *
 *     &#64;Test
 *     void skipsWhileAnotherInstanceRunsIt(InMemoryLockService locks, LockScenarios scenarios) {
 *         scenarios.holdElsewhere("stock-job", Duration.ofMinutes(1));
 *         assertThat(new StockJob(locks).runOnce()).isFalse();
 *     }
 * }
 *
 * class ReportTests {
 *
 *     &#64;RegisterExtension
 *     InMemoryLocksExtension locks = InMemoryLocksExtension.withManualClock();   // time moves by advance only
 * }
 * </pre>
 *
 * @since 0.1.0
 */
public final class InMemoryLocksExtension implements ParameterResolver {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(InMemoryLocksExtension.class);

	private static final List<Class<?>> TYPES = List.of(InMemoryLockService.class, LockService.class,
			LockScenarios.class, InMemoryLockStore.class, LockClock.class, ManualLockClock.class);

	private final boolean manualClock;

	/** The engine on the system clock, as {@code @ExtendWith(InMemoryLocksExtension.class)} makes it. */
	public InMemoryLocksExtension() {
		this(false);
	}

	private InMemoryLocksExtension(boolean manualClock) {
		this.manualClock = manualClock;
	}

	/**
	 * The engine on a {@link ManualLockClock}, for a {@code @RegisterExtension} field: its time moves only when the test
	 * {@linkplain LockScenarios#advance advances} it.
	 * @return the extension
	 */
	public static InMemoryLocksExtension withManualClock() {
		return new InMemoryLocksExtension(true);
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		// a test method and its @BeforeEach and @AfterEach methods share the test's engine; nothing else has one
		return TYPES.contains(type) && parameterContext.getDeclaringExecutable() instanceof Method
				&& extensionContext.getTestMethod().isPresent();
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Locks locks = extensionContext.getStore(NAMESPACE)
			.computeIfAbsent(Locks.class, (key) -> new Locks(this.manualClock), Locks.class);
		Class<?> type = parameterContext.getParameter().getType();
		if (type == LockScenarios.class) {
			return locks.scenarios;
		}
		if (type == InMemoryLockStore.class) {
			return locks.service.store();
		}
		if (type == LockClock.class) {
			return locks.service.clock();
		}
		if (type == ManualLockClock.class) {
			if (!(locks.service.clock() instanceof ManualLockClock manual)) {
				throw new ParameterResolutionException("A ManualLockClock parameter needs the extension's manual clock: "
						+ "@RegisterExtension InMemoryLocksExtension locks = InMemoryLocksExtension.withManualClock()");
			}
			return manual;
		}
		return locks.service;
	}

	/** One test's engine, closed with the test's extension context. */
	private static final class Locks implements AutoCloseable {

		private final InMemoryLockService service;

		private final LockScenarios scenarios;

		Locks(boolean manualClock) {
			InMemoryLockStore store = new InMemoryLockStore(manualClock ? LockClock.manual() : LockClock.system());
			this.service = InMemoryLockService.builder(store).clientId("test").build();
			this.scenarios = LockScenarios.of(store);
		}

		@Override
		public void close() {
			this.service.close();
		}

	}

}
