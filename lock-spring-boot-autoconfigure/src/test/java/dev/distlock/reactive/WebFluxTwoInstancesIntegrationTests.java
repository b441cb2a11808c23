package dev.distlock.reactive;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.interceptor.RedisContextFixture;
import dev.distlock.redis.LockTestSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of a WebFlux application on one Redis, each on a random port, take items from a stock kept in Redis
 * with a non-atomic read-modify-write, under concurrent HTTP requests to both: with {@code @DistributedLock} on the
 * {@code Mono} method no update is lost (every request sees a distinct remaining count, the stock ends at zero);
 * the same code without the annotation loses updates.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class WebFluxTwoInstancesIntegrationTests extends RedisContextFixture {

	private static final int STOCK = 200;

	private static final int CONCURRENT_REQUESTS = 16;

	@BeforeEach
	void flush() {
		redis.execute("SET", "stock:apple", Integer.toString(STOCK));
	}

	@Test
	void theLockedMonoMethodLosesNoUpdateAcrossTwoInstances() {
		List<Long> left = takeFromTwoInstances("/stock/apple/take");
		assertThat(redis.execute("GET", "stock:apple")).isEqualTo("0");
		Set<Long> expected = LongStream.range(0, STOCK).boxed().collect(Collectors.toSet());
		assertThat(new HashSet<>(left)).isEqualTo(expected);
		assertThat(LockTestSupport.leftKeys(redis, "lock:*")).isEmpty();
	}

	@Test
	void theSameCodeWithoutTheLockLosesUpdates() {
		takeFromTwoInstances("/stock/apple/take-unlocked");
		assertThat(Integer.parseInt((String) redis.execute("GET", "stock:apple"))).isPositive();
	}

	private List<Long> takeFromTwoInstances(String path) {
		try (ConfigurableApplicationContext first = start(); ConfigurableApplicationContext second = start()) {
			List<String> bases = List.of(base(first), base(second));
			WebClient client = WebClient.create();
			List<Long> left = Flux.range(0, STOCK)
				.flatMap((i) -> client.post().uri(bases.get(i % 2) + path).retrieve().bodyToMono(Long.class),
						CONCURRENT_REQUESTS)
				.collectList()
				.block(Duration.ofSeconds(120));
			assertThat(left).hasSize(STOCK);
			return left;
		}
	}

	private ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(StockApplication.class).web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
					"spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s", "management.endpoints.access.default=none")
			.run();
	}

	private static String base(ConfigurableApplicationContext context) {
		return "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class StockApplication {

		@Bean
		Stock stock(ReactiveStringRedisTemplate redis) {
			return new Stock(redis);
		}

		@Bean
		RouterFunction<ServerResponse> routes(Stock stock) {
			return RouterFunctions.route()
				.POST("/stock/{sku}/take", (request) -> stock.take(request.pathVariable("sku"))
					.flatMap((left) -> ServerResponse.ok().bodyValue(left)))
				.POST("/stock/{sku}/take-unlocked", (request) -> stock.takeUnlocked(request.pathVariable("sku"))
					.flatMap((left) -> ServerResponse.ok().bodyValue(left)))
				.build();
		}

	}

	static class Stock {

		private final ReactiveStringRedisTemplate redis;

		Stock(ReactiveStringRedisTemplate redis) {
			this.redis = redis;
		}

		@DistributedLock(key = "'stock:' + #sku", waitTime = "60s")
		public Mono<Long> take(String sku) {
			return takeUnlocked(sku);
		}

		/** Read, then write the read value less one: two callers between the read and the write lose one update. */
		public Mono<Long> takeUnlocked(String sku) {
			String key = "stock:" + sku;
			return this.redis.opsForValue().get(key).map(Long::parseLong)
				.delayElement(Duration.ofMillis(2)) // widens the window an unlocked caller loses updates in
				.flatMap((stock) -> this.redis.opsForValue().set(key, Long.toString(stock - 1)).thenReturn(stock - 1));
		}

	}

}
