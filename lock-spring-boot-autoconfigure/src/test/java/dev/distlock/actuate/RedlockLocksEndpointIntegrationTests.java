package dev.distlock.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.distlock.actuate.ActuatorTestApp.Client;
import dev.distlock.actuate.ActuatorTestApp.Response;
import dev.distlock.core.Lease;
import dev.distlock.redis.RedlockLockService;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /actuator/locks/all} of an application on Redlock (three nodes), over real HTTP (issue 29): the locks
 * another instance holds are listed once each, with the nodes that hold them and the other instance's holder label,
 * page by page.
 */
@SpringBootTest(classes = ActuatorTestApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=locks",
				"management.endpoint.locks.show-values=always", "distlock.redlock.node-timeout=500ms",
				"distlock.holder.application=inventory", "distlock.holder.instance=pod-7" })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedlockLocksEndpointIntegrationTests {

	private static final List<RedisServer> nodes = List.of(RedisServer.start(), RedisServer.start(),
			RedisServer.start());

	@DynamicPropertySource
	static void redlockNodes(DynamicPropertyRegistry registry) {
		for (int i = 0; i < nodes.size(); i++) {
			registry.add("distlock.redlock.nodes[" + i + "]", nodes.get(i)::uri);
		}
	}

	@AfterAll
	static void stopNodes() {
		nodes.forEach(RedisServer::close);
	}

	@LocalServerPort
	private int port;

	@Test
	void theLocksOfAnotherInstanceAreListedWithItsLabelAndTheirNodes() throws Exception {
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		for (RedisServer node : nodes) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(node.host(), node.port()));
			factory.afterPropertiesSet();
			factory.start();
			factories.add(factory);
		}
		RedlockLockService billing = RedlockLockService.builder(List.<RedisConnectionFactory>copyOf(factories))
			.nodeTimeout(Duration.ofMillis(500))
			.holderApplication("billing")
			.holderInstance("pod-9")
			.build();
		try {
			List<Lease> held = new ArrayList<>();
			for (int i = 1; i <= 3; i++) {
				// a first call may open the connections; a wait gives it the attempts a loaded machine needs
				held.add(billing.acquire("shelf:" + i, Duration.ofSeconds(30), Duration.ofSeconds(10)));
			}
			Client client = new Client(this.port);
			List<Map<String, Object>> listed = new ArrayList<>();
			String cursor = null;
			int pages = 0;
			do {
				Response page = client.get("/actuator/locks/all?size=2" + ((cursor != null) ? "&cursor=" + cursor : ""));
				assertThat(page.status()).isEqualTo(200);
				listed.addAll(page.read("$.locks"));
				cursor = page.read("$.nextCursor");
				pages++;
			}
			while (cursor != null && pages < 100);

			assertThat(listed).extracting(lock -> lock.get("key"))
				.containsExactlyInAnyOrder("shelf:1", "shelf:2", "shelf:3");
			assertThat(listed).allSatisfy(lock -> {
				assertThat(lock).containsEntry("nodes", 3).containsEntry("holds", 1).containsEntry("mode", "EXCLUSIVE");
				assertThat(lock.get("holder")).isEqualTo(held.get(0).holder().toString());
				assertThat((String) lock.get("holder")).startsWith("billing@pod-9 thread ");
			});
			held.forEach(Lease::release);
		}
		finally {
			billing.close();
			factories.forEach(LettuceConnectionFactory::destroy);
		}
	}

}
