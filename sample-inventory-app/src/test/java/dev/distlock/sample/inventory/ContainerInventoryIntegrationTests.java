package dev.distlock.sample.inventory;

import dev.distlock.sample.inventory.InventoryHttp.Response;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.testcontainers.junit.jupiter.Testcontainers;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Docker twin of the process-backed tests: the app on {@link ContainersConfig}'s Redis container, as
 * {@link TestInventoryApplication} runs it. Skipped where there is no usable Docker (decided quickly, see
 * {@link DockerAvailability}); the other tests never need it.
 */
@EnabledIf("dev.distlock.sample.inventory.DockerAvailability#isAvailable")
@Testcontainers(disabledWithoutDocker = true)
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import({ DevRedisConfiguration.class, ContainersConfig.class })
@ActiveProfiles(ContainersConfig.PROFILE)
class ContainerInventoryIntegrationTests {

	@LocalServerPort
	int port;

	@Autowired
	ObjectProvider<RedisServer> devRedis;

	@Test
	void sellsOnTheContainerInsteadOfAPrivateRedisServer() {
		assertThat(this.devRedis.getIfAvailable()).isNull();
		InventoryHttp http = new InventoryHttp(this.port);
		assertThat(http.setStock("container-sku", 2).status()).isEqualTo(200);

		Response receipt = http.purchase("container-sku", "quantity=2");

		assertThat(receipt.status()).as(receipt.body()).isEqualTo(200);
		assertThat(http.purchase("container-sku", "quantity=1").status()).isEqualTo(409);
	}

}
