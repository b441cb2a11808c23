package dev.distlock.sample.inventory.demo;

import java.time.Duration;

import dev.distlock.sample.inventory.stock.LockMode;
import org.jspecify.annotations.Nullable;

/**
 * What one row of the table did: what the clients were told, and what the store holds afterwards.
 *
 * @param row the row's name: the lock mode's, or {@value #REDLOCK} for the distributed lock on the instances that
 * lock with Redlock
 * @param mode the lock mode the purchases asked for
 * @param attempts purchase attempts sent
 * @param purchased attempts answered 200 (a receipt)
 * @param soldOut attempts answered 409 sold-out
 * @param busy attempts answered 409 lock-busy
 * @param errors attempts that failed otherwise (other statuses, I/O errors)
 * @param firstError the first such failure, for the report
 * @param initialStock the stock the SKU was set to
 * @param remaining the stock left in the store
 * @param sold units in the store's order ledger
 * @param orders orders in the store's order ledger
 * @param elapsed wall time of the load
 * @param p50 median latency of an attempt
 * @param p99 99th percentile latency of an attempt
 */
record ModeResult(String row, LockMode mode, int attempts, int purchased, int soldOut, int busy, int errors,
		@Nullable String firstError, long initialStock, long remaining, long sold, long orders, Duration elapsed,
		Duration p50, Duration p99) {

	/** The row of the distributed lock on the instances whose lock service is Redlock ({@code --redlock}). */
	static final String REDLOCK = "redlock";

	/** Whether this row must be exact: the distributed lock's, on one Redis or on Redlock. */
	boolean mustBeExact() {
		return this.mode == LockMode.DISTRIBUTED;
	}

	/** Units sold beyond what existed: {@code sold + remaining − initial}. Lost updates make it positive. */
	long oversold() {
		return this.sold + this.remaining - this.initialStock;
	}

	/** Orders beyond the initial stock: more units promised than existed, even counting only the ledger. */
	long ordersBeyondStock() {
		return Math.max(0, this.orders - this.initialStock);
	}

	/** Whether anything was sold twice. */
	boolean oversells() {
		return oversold() > 0 || ordersBeyondStock() > 0;
	}

	/** Attempts per second. */
	double throughput() {
		double seconds = this.elapsed.toNanos() / 1e9;
		return (seconds > 0) ? this.attempts / seconds : 0;
	}

	/**
	 * Whether this is exactly what a correct lock must give: {@code expectedSold} units sold (all the stock, or one
	 * per attempt), nothing oversold, the rest still in stock, one order and one receipt per unit.
	 */
	boolean isExact(long expectedSold) {
		return !oversells() && this.sold == expectedSold && this.remaining == this.initialStock - this.sold
				&& this.orders == this.sold && this.purchased == this.sold;
	}

}
