package dev.distlock.sample.inventory.web;

import java.net.URI;

import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockNotOwnedException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.sample.inventory.stock.InvalidRequestException;
import dev.distlock.sample.inventory.stock.SoldOutException;
import dev.distlock.sample.inventory.stock.StaleFencingTokenException;
import dev.distlock.sample.inventory.stock.UnknownSkuException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.TypeMismatchException;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Turns every failure of the API into an RFC 9457 problem detail: the inventory's own outcomes, the lock's, and
 * Spring MVC's (missing parameters, values that are not numbers, unreadable bodies), which it inherits.
 */
@RestControllerAdvice
class InventoryProblemHandler extends ResponseEntityExceptionHandler {

	private static final Log logger = LogFactory.getLog(InventoryProblemHandler.class);

	/** A waiter that timed out may retry soon: purchases hold a SKU's lock for milliseconds. */
	private static final String RETRY_AFTER_SECONDS = "1";

	@ExceptionHandler
	ProblemDetail invalidRequest(InvalidRequestException ex) {
		ProblemDetail problem = problem(HttpStatus.BAD_REQUEST, ProblemTypes.INVALID_REQUEST, "Invalid request", ex.getMessage());
		problem.setProperty("parameter", ex.getParameter());
		return problem;
	}

	@ExceptionHandler
	ProblemDetail unknownSku(UnknownSkuException ex) {
		ProblemDetail problem = problem(HttpStatus.BAD_REQUEST, ProblemTypes.UNKNOWN_SKU, "Unknown SKU", ex.getMessage());
		problem.setProperty("sku", ex.getSku());
		return problem;
	}

	@ExceptionHandler
	ProblemDetail soldOut(SoldOutException ex) {
		ProblemDetail problem = problem(HttpStatus.CONFLICT, ProblemTypes.SOLD_OUT, "Sold out", ex.getMessage());
		problem.setProperty("sku", ex.getSku());
		problem.setProperty("requested", ex.getRequested());
		problem.setProperty("available", ex.getAvailable());
		return problem;
	}

	@ExceptionHandler
	ResponseEntity<ProblemDetail> lockBusy(LockAcquisitionTimeoutException ex) {
		ProblemDetail problem = problem(HttpStatus.CONFLICT, ProblemTypes.LOCK_BUSY, "Lock busy",
				ex.getMessage() + "; nothing was sold, retry later");
		problem.setProperty("lock", ex.getKey());
		problem.setProperty("waitedMs", ex.getWaitTime().toMillis());
		return ResponseEntity.status(HttpStatus.CONFLICT).header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS).body(problem);
	}

	@ExceptionHandler
	ProblemDetail staleFencingToken(StaleFencingTokenException ex) {
		logger.warn(ex.getMessage());
		ProblemDetail problem = problem(HttpStatus.CONFLICT, ProblemTypes.STALE_FENCING_TOKEN, "Stale fencing token",
				ex.getMessage() + "; nothing was sold");
		problem.setProperty("sku", ex.getSku());
		problem.setProperty("fencingToken", ex.getToken());
		problem.setProperty("storedFencingToken", ex.getStoredToken());
		return problem;
	}

	@ExceptionHandler
	ProblemDetail lockLost(LockNotOwnedException ex) {
		logger.warn(ex.getMessage());
		ProblemDetail problem = problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.LOCK_LOST, "Lock lost",
				ex.getMessage() + "; read the SKU to see whether the purchase was recorded before retrying");
		problem.setProperty("lock", ex.getKey());
		return problem;
	}

	@ExceptionHandler
	ProblemDetail lockUnavailable(LockUnavailableException ex) {
		logger.warn(ex.getMessage(), ex);
		return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.UNAVAILABLE, "Lock service unavailable", ex.getMessage());
	}

	@ExceptionHandler
	ProblemDetail storeUnavailable(DataAccessException ex) {
		logger.warn("Inventory store failed: " + ex.getMessage(), ex);
		return problem(HttpStatus.SERVICE_UNAVAILABLE, ProblemTypes.UNAVAILABLE, "Inventory store unavailable",
				"The inventory store could not be reached; the outcome of a purchase is unknown until the SKU is read");
	}

	/** Anything else is a bug or an outage: log it, and still answer with a problem body. */
	@ExceptionHandler
	ProblemDetail unexpected(RuntimeException ex) {
		logger.error("Request failed", ex);
		return problem(HttpStatus.INTERNAL_SERVER_ERROR, ProblemTypes.INTERNAL, "Internal error",
				"The request failed unexpectedly; the outcome of a purchase is unknown until the SKU is read");
	}

	/** {@code ?quantity=abc}: say what was expected instead of naming a Java type. */
	@Override
	protected @Nullable ResponseEntity<Object> handleTypeMismatch(TypeMismatchException ex, HttpHeaders headers,
			HttpStatusCode status, WebRequest request) {
		String name = (ex instanceof MethodArgumentTypeMismatchException mismatch) ? mismatch.getName() : ex.getPropertyName();
		Class<?> required = ex.getRequiredType();
		String expected = (required == int.class || required == long.class || required == Integer.class
				|| required == Long.class) ? "a whole number" : "a " + ((required != null) ? required.getSimpleName() : "value");
		ProblemDetail problem = problem(HttpStatus.BAD_REQUEST, ProblemTypes.INVALID_REQUEST, "Invalid request",
				"Parameter '" + name + "' must be " + expected + ", but was '" + ex.getValue() + "'");
		problem.setProperty("parameter", name);
		return handleExceptionInternal(ex, problem, headers, HttpStatus.BAD_REQUEST, request);
	}

	@Override
	protected @Nullable ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex,
			HttpHeaders headers, HttpStatusCode status, WebRequest request) {
		ProblemDetail problem = problem(HttpStatus.BAD_REQUEST, ProblemTypes.INVALID_REQUEST, "Invalid request",
				"Body must be JSON like {\"stock\": 500} with a whole number");
		return handleExceptionInternal(ex, problem, headers, HttpStatus.BAD_REQUEST, request);
	}

	private static ProblemDetail problem(HttpStatus status, URI type, String title, @Nullable String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setType(type);
		problem.setTitle(title);
		return problem;
	}

}
