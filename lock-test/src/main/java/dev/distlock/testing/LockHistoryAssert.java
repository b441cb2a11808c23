package dev.distlock.testing;

import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.distlock.testing.LockHistory.Entry;
import dev.distlock.testing.LockHistory.Kind;
import org.assertj.core.api.AbstractAssert;
import org.jspecify.annotations.Nullable;

/**
 * AssertJ assertions on a {@link LockHistory}: which keys were locked, how often and how long acquisitions waited, which
 * were busy, lost or failed, and whether the application released what it took. Get one from
 * {@link LockAssertions#assertThat}. Keys are the application's lock keys. A failure shows the history of the key it
 * is about (or all of it), one entry a line, so the test's log says what happened instead.
 *
 * @since 0.1.0
 */
public class LockHistoryAssert extends AbstractAssert<LockHistoryAssert, LockHistory> {

	private static final Set<Kind> ATTEMPTS = EnumSet.of(Kind.ACQUIRED, Kind.REENTERED, Kind.NOT_ACQUIRED, Kind.FAILED);

	/**
	 * Assertions on {@code history}.
	 * @param history what happened, or {@code null} (which fails every assertion)
	 */
	protected LockHistoryAssert(@Nullable LockHistory history) {
		super(history, LockHistoryAssert.class);
	}

	/**
	 * Verify that {@code key} was locked (a new lease acquired by the application) at least once; follow with
	 * {@link AcquiredAssert#times(int)} to say how often.
	 * @param key the application's lock key
	 * @return assertions that also count the acquisitions
	 */
	public AcquiredAssert acquired(String key) {
		isNotNull();
		if (count(key, Kind.ACQUIRED) == 0) {
			failWithMessage("%s", "Expected lock '" + key + "' to have been acquired, but it never was; "
					+ describe(key));
		}
		return new AcquiredAssert(this.actual, key);
	}

	/**
	 * Verify that {@code key} was never locked by the application (no lease acquired nor re-entered).
	 * @param key the application's lock key
	 * @return this
	 */
	public LockHistoryAssert neverLocked(String key) {
		isNotNull();
		long locked = count(key, Kind.ACQUIRED) + count(key, Kind.REENTERED);
		if (locked > 0) {
			failWithMessage("%s", "Expected lock '" + key + "' never to have been acquired, but it was " + locked
					+ " time(s); " + describe(key));
		}
		return this;
	}

	/**
	 * Verify that an acquisition of {@code key} found it busy: it ended without the key because another owner held it
	 * for the whole wait (with {@code @DistributedLock}, a {@code LockAcquisitionTimeoutException}).
	 * @param key the application's lock key
	 * @return this
	 */
	public LockHistoryAssert wasBusy(String key) {
		isNotNull();
		if (count(key, Kind.NOT_ACQUIRED) == 0) {
			failWithMessage("%s", "Expected an acquisition of lock '" + key
					+ "' to have found it busy (ended without it), but none did; " + describe(key));
		}
		return this;
	}

	/**
	 * Verify that {@code key} was acquired or tried at least once, and that no acquisition of it waited longer than
	 * {@code max}, whether it got the key, ended without it or failed.
	 * @param key the application's lock key
	 * @param max the longest wait allowed
	 * @return this
	 */
	public LockHistoryAssert waitedAtMost(String key, Duration max) {
		isNotNull();
		List<Entry> attempts = this.actual.entries(key).stream().filter((entry) -> ATTEMPTS.contains(entry.kind())).toList();
		if (attempts.isEmpty()) {
			failWithMessage("%s", "Expected acquisitions of lock '" + key + "' to have waited at most " + max
					+ ", but there was none; " + describe(key));
		}
		Duration longest = attempts.stream().map(Entry::duration).max(Duration::compareTo).orElse(Duration.ZERO);
		if (longest.compareTo(max) > 0) {
			failWithMessage("%s", "Expected acquisitions of lock '" + key + "' to have waited at most " + max
					+ ", but one waited " + longest + "; " + describe(key));
		}
		return this;
	}

	/**
	 * Verify that a lease on {@code key} was lost while the application held it (lost now, at a renewal, or found
	 * gone by its holder).
	 * @param key the application's lock key
	 * @return this
	 */
	public LockHistoryAssert lost(String key) {
		isNotNull();
		if (count(key, Kind.LOST) == 0) {
			failWithMessage("%s", "Expected a lease of lock '" + key + "' to have been lost, but none was; "
					+ describe(key));
		}
		return this;
	}

	/**
	 * Verify that an acquisition of {@code key} failed because Redis did not answer
	 * ({@code LockUnavailableException}).
	 * @param key the application's lock key
	 * @return this
	 */
	public LockHistoryAssert failed(String key) {
		isNotNull();
		if (count(key, Kind.FAILED) == 0) {
			failWithMessage("%s", "Expected an acquisition of lock '" + key + "' to have failed, but none did; "
					+ describe(key));
		}
		return this;
	}

	/**
	 * Verify that the application released every hold it took, each acquisition and re-entry, of every key (a lease
	 * that was lost or expired counts once its holder released it, as a release that found it gone): no lease leaked.
	 * The holds of other instances ({@code holdElsewhere}) are not the application's and do not count.
	 * @return this
	 */
	public LockHistoryAssert releasedEverything() {
		isNotNull();
		Map<String, Integer> open = new HashMap<>();
		Map<String, String> keys = new HashMap<>();
		for (Entry entry : this.actual.entries()) {
			if (entry.owner() == null || entry.instance().equals(ForeignHold.INSTANCE)) {
				continue;
			}
			if (entry.kind() == Kind.ACQUIRED || entry.kind() == Kind.REENTERED) {
				open.merge(entry.owner(), 1, Integer::sum);
				keys.put(entry.owner(), entry.key());
			}
			else if (entry.kind() == Kind.RELEASED) {
				open.merge(entry.owner(), -1, Integer::sum);
			}
		}
		List<String> unreleased = open.entrySet().stream()
			.filter((owner) -> owner.getValue() > 0)
			.map((owner) -> "'" + keys.get(owner.getKey()) + "' (owner " + owner.getKey() + ", " + owner.getValue()
					+ " hold(s))")
			.sorted()
			.toList();
		if (!unreleased.isEmpty()) {
			failWithMessage("%s", "Expected every lease to have been released, but these were not: "
					+ String.join(", ", unreleased) + "; " + describe(null));
		}
		return this;
	}

	private long count(String key, Kind kind) {
		return this.actual.entries(key).stream().filter((entry) -> entry.kind() == kind).count();
	}

	/** The history of {@code key} (or all of it, for null), one entry a line. */
	String describe(@Nullable String key) {
		List<Entry> entries = (key != null) ? this.actual.entries(key) : this.actual.entries();
		String what = (key != null) ? "history of '" + key + "'" : "history";
		if (entries.isEmpty()) {
			return what + ": (empty)";
		}
		return what + ":" + entries.stream().map((entry) -> System.lineSeparator() + "  " + line(entry))
			.collect(Collectors.joining());
	}

	/** One entry, as a failure message shows it. */
	static String line(Entry entry) {
		StringBuilder line = new StringBuilder().append(entry.at()).append(' ').append(entry.kind());
		line.append(" '").append(entry.key()).append("' by ");
		line.append((entry.owner() != null) ? entry.owner() : entry.instance());
		if (entry.fencingToken() != 0) {
			line.append(", token ").append(entry.fencingToken());
		}
		switch (entry.kind()) {
			case ACQUIRED, REENTERED, NOT_ACQUIRED, FAILED, INTERRUPTED, CANCELLED ->
				line.append(", waited ").append(entry.duration());
			case RELEASED, LOST, EXPIRED, FORCE_RELEASED -> line.append(", held ").append(entry.duration());
			default -> {
			}
		}
		if (entry.detail() != null) {
			line.append(" (").append(entry.detail()).append(')');
		}
		return line.toString();
	}

	/**
	 * The assertions after {@link LockHistoryAssert#acquired(String)}: all of them, and how often the key was acquired.
	 *
	 * @since 0.1.0
	 */
	public static final class AcquiredAssert extends LockHistoryAssert {

		private final String key;

		AcquiredAssert(LockHistory history, String key) {
			super(history);
			this.key = key;
		}

		/**
		 * Verify that the key was locked exactly {@code times} times: new leases acquired, re-entries not counted.
		 * @param times how often
		 * @return assertions on the whole history again
		 */
		public LockHistoryAssert times(int times) {
			long acquired = this.actual.entries(this.key).stream().filter((entry) -> entry.kind() == Kind.ACQUIRED).count();
			if (acquired != times) {
				failWithMessage("%s", "Expected lock '" + this.key + "' to have been acquired " + times
						+ " time(s), but it was " + acquired + " time(s); " + describe(this.key));
			}
			return this;
		}

	}

}
