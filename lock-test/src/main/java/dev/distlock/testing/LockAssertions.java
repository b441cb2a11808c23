package dev.distlock.testing;

/**
 * The entry point of the AssertJ assertions on what happened to the locks, beside AssertJ's own
 * ({@code import static dev.distlock.testing.LockAssertions.assertThat;} next to
 * {@code import static org.assertj.core.api.Assertions.assertThat;} is fine: the overloads do not clash).
 *
 * <pre class="code">
 * assertThat(locks).acquired("inventory:sku-42").times(1)
 *     .waitedAtMost("inventory:sku-42", Duration.ofMillis(100))
 *     .releasedEverything();
 * </pre>
 *
 * @since 0.1.0
 */
public final class LockAssertions {

	private LockAssertions() {
	}

	/**
	 * Assert on what happened to the locks of the scenarios' store.
	 * @param scenarios the test's scenarios
	 * @return the assertions
	 */
	public static LockHistoryAssert assertThat(LockScenarios scenarios) {
		return new LockHistoryAssert((scenarios != null) ? scenarios.history() : null);
	}

	/**
	 * Assert on what happened to the locks of a store.
	 * @param history the store's history
	 * @return the assertions
	 */
	public static LockHistoryAssert assertThat(LockHistory history) {
		return new LockHistoryAssert(history);
	}

}
