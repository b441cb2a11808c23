package dev.distlock.redis;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The FIFO check of the fair lock's multi-process scenario, on a logical clock that the processes and the test's
 * queue snapshots share (one Redis counter).
 * <p>
 * Each acquisition A is recorded with its process, its <em>ticket</em> {@code t(A)} (the clock, incremented just
 * before its acquire call) and its <em>order</em> {@code o(A)} (a counter incremented inside the critical section).
 * Each snapshot is the queue's content taken atomically with a tick {@code c} of the same clock. A process makes one
 * acquisition at a time, so an element of the queue that names process P at tick {@code c} is P's acquisition with
 * the greatest ticket below {@code c}: it was waiting in the queue at {@code c}. Let {@code seen(A)} be the first
 * such tick. The rule: <strong>every acquisition B whose ticket was taken after A was seen in the queue
 * ({@code t(B) > seen(A)}) enters the critical section after A ({@code o(B) > o(A)})</strong>. Acquisitions whose
 * attempts overlapped without one being seen queued before the other's ticket are concurrent arrivals: either order
 * is allowed.
 */
final class FairFifoCheck {

	private final List<Acquisition> acquisitions = new ArrayList<>();

	private final Map<String, TreeMap<Long, Acquisition>> byProcess = new HashMap<>();

	private final Map<String, String> clientIds;

	/**
	 * A check over these records.
	 * @param records {@code <process> <ticket> <order> <token>} per acquisition
	 * @param clientIds each process's client id, by process
	 */
	FairFifoCheck(List<String> records, Map<String, String> clientIds) {
		this.clientIds = clientIds;
		for (String record : records) {
			String[] parts = record.split(" ");
			Acquisition acquisition = new Acquisition(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2]),
					Long.parseLong(parts[3]));
			this.acquisitions.add(acquisition);
			this.byProcess.computeIfAbsent(acquisition.process, p -> new TreeMap<>()).put(acquisition.ticket, acquisition);
		}
	}

	/**
	 * Note what a snapshot shows waiting.
	 * @param snapshot the queue at one tick
	 */
	void observe(FairQueueProbe.Snapshot snapshot) {
		this.clientIds.forEach((process, clientId) -> {
			if (FairQueueProbe.position(snapshot.queue(), clientId) >= 0) {
				Map.Entry<Long, Acquisition> waiting = this.byProcess.getOrDefault(process, new TreeMap<>())
					.lowerEntry(snapshot.clock());
				if (waiting != null && waiting.getValue().seen > snapshot.clock()) {
					waiting.getValue().seen = snapshot.clock();
				}
			}
		});
	}

	/** {@return how many acquisitions were seen waiting in the queue} */
	long seenWaiting() {
		return this.acquisitions.stream().filter(a -> a.seen != Long.MAX_VALUE).count();
	}

	/**
	 * Check the rule.
	 * @return the pairs (A, B) the rule orders, and the violations
	 */
	Result check() {
		List<Acquisition> byTicket = new ArrayList<>(this.acquisitions);
		byTicket.sort(Comparator.comparingLong(a -> a.ticket));
		int n = byTicket.size();
		int[] earliestFrom = new int[n + 1]; // index of the smallest order among byTicket[i..n-1]
		earliestFrom[n] = -1;
		for (int i = n - 1; i >= 0; i--) {
			int next = earliestFrom[i + 1];
			earliestFrom[i] = (next < 0 || byTicket.get(i).order < byTicket.get(next).order) ? i : next;
		}
		long ordered = 0;
		List<String> violations = new ArrayList<>();
		for (Acquisition a : byTicket) {
			if (a.seen == Long.MAX_VALUE) {
				continue;
			}
			int from = firstTicketAbove(byTicket, a.seen);
			ordered += n - from;
			int earliest = earliestFrom[from];
			if (earliest >= 0 && byTicket.get(earliest).order < a.order) {
				violations.add(a + " was waiting in the queue at tick " + a.seen + ", but " + byTicket.get(earliest)
						+ " took its ticket later and entered first");
			}
		}
		return new Result(ordered, violations);
	}

	private static int firstTicketAbove(List<Acquisition> byTicket, long tick) {
		int low = 0;
		int high = byTicket.size();
		while (low < high) {
			int mid = (low + high) >>> 1;
			if (byTicket.get(mid).ticket > tick) {
				high = mid;
			}
			else {
				low = mid + 1;
			}
		}
		return low;
	}

	/** {@return the fencing tokens in the order the acquisitions entered the critical section} */
	List<Long> tokensInOrder() {
		return this.acquisitions.stream().sorted(Comparator.comparingLong(a -> a.order)).map(a -> a.token).toList();
	}

	/**
	 * What the check found.
	 * @param orderedPairs how many pairs the rule ordered
	 * @param violations the pairs that entered against the rule
	 */
	record Result(long orderedPairs, List<String> violations) {
	}

	private static final class Acquisition {

		final String process;

		final long ticket;

		final long order;

		final long token;

		long seen = Long.MAX_VALUE;

		Acquisition(String process, long ticket, long order, long token) {
			this.process = process;
			this.ticket = ticket;
			this.order = order;
			this.token = token;
		}

		@Override
		public String toString() {
			return "process " + this.process + "'s acquisition (ticket " + this.ticket + ", order " + this.order + ")";
		}

	}

}
