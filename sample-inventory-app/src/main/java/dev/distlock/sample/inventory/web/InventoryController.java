package dev.distlock.sample.inventory.web;

import java.util.List;

import dev.distlock.sample.inventory.stock.InventoryService;
import dev.distlock.sample.inventory.stock.InvalidRequestException;
import dev.distlock.sample.inventory.stock.LockMode;
import dev.distlock.sample.inventory.stock.Order;
import dev.distlock.sample.inventory.stock.Receipt;
import dev.distlock.sample.inventory.stock.Skus;
import dev.distlock.sample.inventory.stock.StockLevel;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The inventory API. Errors are RFC 9457 problem details, see {@link ProblemTypes}.
 * <pre>
 * PUT    /api/inventory/{sku}              {"stock": 500}   set the stock, start a new ledger
 * GET    /api/inventory/{sku}                               stock, sold, orders, oversold
 * POST   /api/inventory/{sku}/purchases?quantity=1&amp;lock=distributed|local|none
 * GET    /api/inventory/{sku}/orders?limit=20               the newest orders
 * DELETE /api/inventory/{sku}
 * </pre>
 * Input is checked here, before any lock is taken, so a malformed SKU never becomes a lock key.
 */
@RestController
@RequestMapping("/api/inventory")
class InventoryController {

	private static final int MAX_ORDERS_LIMIT = 1000;

	private final InventoryService inventory;

	InventoryController(InventoryService inventory) {
		this.inventory = inventory;
	}

	@GetMapping("/{sku}")
	StockLevel level(@PathVariable String sku) {
		return this.inventory.find(Skus.requireValidSku(sku)).orElseThrow(() -> notFound(sku));
	}

	@PutMapping("/{sku}")
	StockLevel setStock(@PathVariable String sku, @RequestBody SetStockRequest request) {
		Skus.requireValidSku(sku);
		Long stock = request.stock();
		if (stock == null) {
			throw new InvalidRequestException("stock", "Body must give the stock, like {\"stock\": 500}");
		}
		return this.inventory.setStock(sku, Skus.requireValidStock(stock));
	}

	@DeleteMapping("/{sku}")
	ResponseEntity<Void> delete(@PathVariable String sku) {
		Skus.requireValidSku(sku);
		if (!this.inventory.delete(sku)) {
			throw notFound(sku);
		}
		return ResponseEntity.noContent().build();
	}

	/**
	 * Buy {@code quantity} units (default 1). {@code lock} chooses how the purchase is guarded: {@code distributed}
	 * (the default, and the only correct one with several instances), {@code local} or {@code none}.
	 */
	@PostMapping("/{sku}/purchases")
	Receipt purchase(@PathVariable String sku, @RequestParam(defaultValue = "1") int quantity,
			@RequestParam(defaultValue = "distributed") String lock) {
		Skus.requireValidSku(sku);
		Skus.requirePositiveQuantity(quantity);
		return switch (LockMode.fromParameter(lock)) {
			case DISTRIBUTED -> this.inventory.purchase(sku, quantity);
			case LOCAL -> this.inventory.purchaseWithLocalLock(sku, quantity);
			case NONE -> this.inventory.purchaseWithoutLock(sku, quantity);
		};
	}

	@GetMapping("/{sku}/orders")
	List<Order> orders(@PathVariable String sku, @RequestParam(defaultValue = "20") int limit) {
		if (limit < 1 || limit > MAX_ORDERS_LIMIT) {
			throw new InvalidRequestException("limit", "Limit must be between 1 and " + MAX_ORDERS_LIMIT + ", but was " + limit);
		}
		return this.inventory.recentOrders(Skus.requireValidSku(sku), limit);
	}

	private static ErrorResponseException notFound(String sku) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND,
				"Unknown SKU '" + sku + "': set its stock first (PUT /api/inventory/" + sku + ")");
		problem.setType(ProblemTypes.UNKNOWN_SKU);
		problem.setTitle("Unknown SKU");
		problem.setProperty("sku", sku);
		return new ErrorResponseException(HttpStatus.NOT_FOUND, problem, null);
	}

}
