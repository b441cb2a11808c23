package dev.distlock.testing.autoconfigure.slice;

import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.testing.autoconfigure.Stock;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** Sells over HTTP; a busy lock is a 409. */
@RestController
class StockController {

	private final Stock stock;

	StockController(Stock stock) {
		this.stock = stock;
	}

	@PostMapping("/stock/{sku}/sales")
	int sell(@PathVariable String sku) {
		return this.stock.sell(sku);
	}

	@ExceptionHandler
	@ResponseStatus(HttpStatus.CONFLICT)
	String busy(LockAcquisitionTimeoutException ex) {
		return "lock-busy " + ex.getKey();
	}

}
