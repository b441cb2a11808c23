package dev.distlock.actuate;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import dev.distlock.actuate.ActuatorTestApp.Client;
import dev.distlock.actuate.ActuatorTestApp.Response;
import dev.distlock.core.Lease;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Owner ids and fencing tokens in the {@code locks} endpoint follow {@code management.endpoint.locks.show-values} over
 * real HTTP, for an anonymous caller and for authenticated callers with and without the configured role: masked as
 * {@code ******} unless shown. The caller is authenticated by {@link TestPrincipalFilter} (the servlet API Spring
 * Security fills in too), so the test needs no Spring Security on the classpath.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocksEndpointShowValuesIntegrationTests {

	private static final String MASK = "******";

	private static RedisServer redis;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	private static ConfigurableApplicationContext start(String... properties) {
		return new SpringApplicationBuilder(ActuatorTestApp.class, Authentication.class)
			.properties("server.port=0", "management.endpoints.web.exposure.include=locks",
					"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s")
			.properties(properties)
			.run();
	}

	private static Client client(ConfigurableApplicationContext context) {
		return new Client(((WebServerApplicationContext) context).getWebServer().getPort());
	}

	private static String token(String key) {
		return String.valueOf(redis.execute("HGET", "lock:{" + key + "}", "~t"));
	}

	private static void assertMasked(Response response) {
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.<String>read("$.clientId")).isEqualTo(MASK);
		assertThat(response.<String>read("$.leases[0].key")).isEqualTo("sku-1");
		assertThat(response.<String>read("$.leases[0].owner")).isEqualTo(MASK);
		assertThat(response.<Object>read("$.leases[0].fencingToken")).isEqualTo(MASK);
	}

	private static void assertShown(Response response, RedisLockService locks) {
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.<String>read("$.clientId")).isEqualTo(locks.clientId());
		assertThat(response.<String>read("$.leases[0].owner")).startsWith(locks.clientId() + ":");
		assertThat(String.valueOf(response.<Object>read("$.leases[0].fencingToken"))).isEqualTo(token("sku-1"));
	}

	@Test
	void byDefaultOnlyAuthenticatedCallersSeeOwnersAndTokens() throws Exception {
		try (ConfigurableApplicationContext context = start()) {
			RedisLockService locks = context.getBean(RedisLockService.class);
			try (Lease lease = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO)) {
				Client client = client(context);
				assertMasked(client.get("/actuator/locks"));
				assertShown(client.get("/actuator/locks", TestPrincipalFilter.USER, "alice"), locks);
				// the store's view of every lock follows the same rule
				assertThat(client.get("/actuator/locks/all").<Object>read("$.locks[0].fencingToken")).isEqualTo(MASK);
				assertThat(String.valueOf(client.get("/actuator/locks/all", TestPrincipalFilter.USER, "alice")
					.<Object>read("$.locks[0].fencingToken"))).isEqualTo(token("sku-1"));
				// and so does the holder's label
				assertThat(client.get("/actuator/locks/all").<Object>read("$.locks[0].holder")).isEqualTo(MASK);
				assertThat(client.get("/actuator/locks/all", TestPrincipalFilter.USER, "alice")
					.<Object>read("$.locks[0].holder")).isEqualTo(lease.holder().toString());
			}
		}
	}

	@Test
	void withRolesOnlyCallersWithOneOfThemSeeOwnersAndTokens() throws Exception {
		try (ConfigurableApplicationContext context = start("management.endpoint.locks.roles=LOCKS_ADMIN,OPS")) {
			RedisLockService locks = context.getBean(RedisLockService.class);
			try (Lease lease = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO)) {
				Client client = client(context);
				assertMasked(client.get("/actuator/locks"));
				assertMasked(client.get("/actuator/locks", TestPrincipalFilter.USER, "bob", TestPrincipalFilter.ROLES,
						"VIEWER"));
				assertShown(client.get("/actuator/locks", TestPrincipalFilter.USER, "alice", TestPrincipalFilter.ROLES,
						"VIEWER,OPS"), locks);
			}
		}
	}

	@Test
	void neverShowsThemToAnyone() throws Exception {
		try (ConfigurableApplicationContext context = start("management.endpoint.locks.show-values=never")) {
			RedisLockService locks = context.getBean(RedisLockService.class);
			try (Lease lease = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO)) {
				assertMasked(client(context).get("/actuator/locks", TestPrincipalFilter.USER, "alice",
						TestPrincipalFilter.ROLES, "LOCKS_ADMIN"));
			}
		}
	}

	@Test
	void alwaysShowsThemToAnyone() throws Exception {
		try (ConfigurableApplicationContext context = start("management.endpoint.locks.show-values=always")) {
			RedisLockService locks = context.getBean(RedisLockService.class);
			try (Lease lease = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO)) {
				assertShown(client(context).get("/actuator/locks"), locks);
			}
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void overJmxWhereBootKnowsNoCallerWhenAuthorizedMasksThem() throws Exception {
		try (ConfigurableApplicationContext context = start("spring.jmx.enabled=true",
				"management.endpoints.jmx.exposure.include=locks", "management.endpoints.jmx.domain=distlock.test")) {
			RedisLockService locks = context.getBean(RedisLockService.class);
			try (Lease lease = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO)) {
				MBeanServer server = ManagementFactory.getPlatformMBeanServer();
				ObjectName endpoint = server.queryNames(new ObjectName("distlock.test:type=Endpoint,name=Locks,*"), null)
					.iterator()
					.next();
				Map<String, Object> reply = (Map<String, Object>) server.invoke(endpoint, "locks", new Object[0],
						new String[0]);
				assertThat(reply).containsEntry("clientId", MASK);
				assertThat((List<Map<String, Object>>) reply.get("leases")).singleElement()
					.satisfies(leaseReply -> assertThat(leaseReply).containsEntry("key", "sku-1")
						.containsEntry("owner", MASK)
						.containsEntry("fencingToken", MASK));
			}
		}
	}

	@Test
	void theForcedReleaseResponseMasksTheFormerOwnerAndTokenAlike() throws Exception {
		try (ConfigurableApplicationContext context = start("distlock.actuator.force-release.enabled=true")) {
			RedisLockService locks = context.getBean(RedisLockService.class);
			Client client = client(context);
			locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ZERO);
			Response anonymous = client.delete("/actuator/locks/sku-1");
			assertThat(anonymous.status()).isEqualTo(200);
			assertThat(anonymous.<Boolean>read("$.released")).isTrue();
			assertThat(anonymous.<Integer>read("$.holdCount")).isEqualTo(1);
			assertThat(anonymous.<String>read("$.formerOwner")).isEqualTo(MASK);
			assertThat(anonymous.<List<String>>read("$.formerOwners")).containsExactly(MASK);
			assertThat(anonymous.<Object>read("$.fencingToken")).isEqualTo(MASK);

			Lease second = locks.acquire("sku-2", Duration.ofSeconds(30), Duration.ZERO);
			String token = token("sku-2");
			Response authenticated = client.delete("/actuator/locks/sku-2", TestPrincipalFilter.USER, "alice");
			assertThat(authenticated.<String>read("$.formerOwner")).isEqualTo(second.owner());
			assertThat(authenticated.<List<String>>read("$.formerOwners")).containsExactly(second.owner());
			assertThat(String.valueOf(authenticated.<Object>read("$.fencingToken"))).isEqualTo(token);
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Authentication {

		@Bean
		TestPrincipalFilter testPrincipalFilter() {
			return new TestPrincipalFilter();
		}

	}

}
