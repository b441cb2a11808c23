package dev.distlock.testing.autoconfigure;

import dev.distlock.testing.LockScenarios;

import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * Starts the {@link LockScenarios} of a Spring test's context afresh before each test method
 * ({@link LockScenarios#reset()}), as the context, and so its in-memory store, is shared by the tests that use the same
 * configuration: one test's holds elsewhere, outage and history never leak into the next. Registered in
 * {@code META-INF/spring.factories}; does nothing for a context without scenarios.
 *
 * @since 0.1.0
 */
public final class LockScenariosTestExecutionListener extends AbstractTestExecutionListener {

	/** Created by the Spring TestContext Framework from {@code spring.factories}. */
	public LockScenariosTestExecutionListener() {
	}

	/** After the listeners that prepare the context and inject the test instance, before the test's own set-up. */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE - 100;
	}

	@Override
	public void beforeTestMethod(TestContext testContext) {
		if (testContext.hasApplicationContext()) {
			testContext.getApplicationContext().getBeanProvider(LockScenarios.class).ifUnique(LockScenarios::reset);
		}
	}

}
