package dev.distlock.sample.inventory.demo;

import java.io.PrintStream;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import org.jspecify.annotations.Nullable;

/**
 * A progress bar on stderr. On a terminal it redraws one line in place; elsewhere (CI logs, pipes) it prints a plain
 * line at every quarter, so logs stay readable.
 */
final class Progress implements AutoCloseable {

	private static final int WIDTH = 30;

	private final PrintStream out;

	private final boolean interactive;

	private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "demo-progress");
		thread.setDaemon(true);
		return thread;
	});

	private @Nullable ScheduledFuture<?> current;

	private String label = "";

	private int total;

	private IntSupplier done = () -> 0;

	private IntSupplier purchased = () -> 0;

	private int lastQuarter;

	private boolean closed;

	Progress(PrintStream out, boolean interactive) {
		this.out = out;
		this.interactive = interactive;
	}

	/** Whether stderr is likely a terminal that understands carriage returns. */
	static boolean isInteractiveTerminal() {
		String term = System.getenv("TERM");
		return System.console() != null && System.getenv("CI") == null && term != null && !term.equals("dumb");
	}

	synchronized void start(String label, int total, IntSupplier done, IntSupplier purchased) {
		if (this.closed) {
			return;
		}
		this.label = label;
		this.total = total;
		this.done = done;
		this.purchased = purchased;
		this.lastQuarter = 0;
		this.current = this.ticker.scheduleAtFixedRate(this::tick, 0, this.interactive ? 100 : 250, TimeUnit.MILLISECONDS);
	}

	synchronized void finish() {
		if (this.current != null) {
			this.current.cancel(false);
			this.current = null;
		}
		render(true);
	}

	/** Stop drawing, for good: also what the demo does when it is interrupted. */
	@Override
	public synchronized void close() {
		this.closed = true;
		this.ticker.shutdownNow();
	}

	private synchronized void tick() {
		render(false);
	}

	private void render(boolean last) {
		if (this.closed) {
			return;
		}
		int doneNow = this.done.getAsInt();
		int soldNow = this.purchased.getAsInt();
		if (this.interactive) {
			int filled = (this.total == 0) ? WIDTH : (int) ((long) doneNow * WIDTH / this.total);
			String bar = "#".repeat(filled) + "-".repeat(WIDTH - filled);
			this.out.print(String.format("\r  %-12s [%s] %6d/%-6d purchased %6d", this.label, bar, doneNow, this.total, soldNow));
			if (last) {
				this.out.println();
			}
			this.out.flush();
			return;
		}
		int quarter = (this.total == 0) ? 4 : (int) ((long) doneNow * 4 / this.total);
		if (quarter > this.lastQuarter || (last && this.lastQuarter < 4)) {
			this.lastQuarter = Math.max(quarter, last ? 4 : quarter);
			this.out.println(String.format("  %-12s %3d%%  %6d/%-6d purchased %6d", this.label,
					(this.total == 0) ? 100 : doneNow * 100 / this.total, doneNow, this.total, soldNow));
			this.out.flush();
		}
	}

}
