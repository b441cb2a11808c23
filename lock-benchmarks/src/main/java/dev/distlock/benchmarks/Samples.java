package dev.distlock.benchmarks;

import java.util.Arrays;

/** A growable list of nanosecond samples with percentiles; one per thread, merged after the run. */
final class Samples {

	private long[] values = new long[1024];

	private int size;

	private boolean sorted;

	void add(long value) {
		if (this.size == this.values.length) {
			this.values = Arrays.copyOf(this.values, this.size * 2);
		}
		this.values[this.size++] = value;
		this.sorted = false;
	}

	void addAll(Samples other) {
		for (int i = 0; i < other.size; i++) {
			add(other.values[i]);
		}
	}

	int size() {
		return this.size;
	}

	/** The {@code p}-th percentile (nearest rank), or 0 without samples. */
	long percentile(double p) {
		if (this.size == 0) {
			return 0;
		}
		if (!this.sorted) {
			Arrays.sort(this.values, 0, this.size);
			this.sorted = true;
		}
		int rank = (int) Math.ceil(p / 100.0 * this.size);
		return this.values[Math.min(this.size - 1, Math.max(0, rank - 1))];
	}

	static double median(double[] values) {
		double[] copy = values.clone();
		Arrays.sort(copy);
		int n = copy.length;
		return (n % 2 == 1) ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
	}

}
