package dev.distlock.testing.autoconfigure.slice;

import dev.distlock.testing.LockScenarios;
import dev.distlock.testing.autoconfigure.AutoConfigureInMemoryLocks;
import dev.distlock.testing.autoconfigure.Stock;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import static dev.distlock.testing.LockAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A test slice, which has none of the starter's auto-configurations of its own: {@code @AutoConfigureInMemoryLocks}
 * brings the in-memory engine and the {@code @DistributedLock} support, so the controller's call answers 409 while
 * another instance holds the key.
 */
@WebMvcTest(StockController.class)
@AutoConfigureInMemoryLocks
@Import(Stock.class)
class AutoConfigureInMemoryLocksWebMvcTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	LockScenarios locks;

	@Test
	void aSaleIsAConflictWhileAnotherInstanceHoldsTheSku() {
		this.locks.holdElsewhere("stock:sku-9");

		assertThat(this.mvc.post().uri("/stock/sku-9/sales")).hasStatus(409)
			.bodyText()
			.isEqualTo("lock-busy stock:sku-9");
		assertThat(this.locks).wasBusy("stock:sku-9");
	}

	@Test
	void aSaleLocksTheSkuOnce() {
		assertThat(this.mvc.post().uri("/stock/sku-9/sales")).hasStatusOk().bodyText().isEqualTo("1");
		assertThat(this.locks).acquired("stock:sku-9").times(1).releasedEverything();
	}

}
