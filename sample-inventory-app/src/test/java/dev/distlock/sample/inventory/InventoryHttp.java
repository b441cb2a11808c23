package dev.distlock.sample.inventory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A real HTTP client for one app instance's inventory API, for tests. */
public final class InventoryHttp {

	private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(10)).build();

	private static final JsonMapper JSON = JsonMapper.builder().build();

	/** Generous: the build machine is shared. */
	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private final URI base;

	public InventoryHttp(int port) {
		this.base = URI.create("http://127.0.0.1:" + port);
	}

	public Response setStock(String sku, String body) {
		return send(HttpRequest.newBuilder(uri("/api/inventory/" + sku)).header("Content-Type", "application/json")
			.PUT(HttpRequest.BodyPublishers.ofString(body)));
	}

	public Response setStock(String sku, long stock) {
		return setStock(sku, "{\"stock\": " + stock + "}");
	}

	public Response level(String sku) {
		return send(HttpRequest.newBuilder(uri("/api/inventory/" + sku)).GET());
	}

	public Response purchase(String sku, String query) {
		return send(HttpRequest.newBuilder(uri("/api/inventory/" + sku + "/purchases" + (query.isEmpty() ? "" : "?" + query)))
			.POST(HttpRequest.BodyPublishers.noBody()));
	}

	public Response orders(String sku, String query) {
		return send(HttpRequest.newBuilder(uri("/api/inventory/" + sku + "/orders" + (query.isEmpty() ? "" : "?" + query))).GET());
	}

	/** GET any path of the instance, {@code /actuator/health} say. */
	public Response get(String path) {
		return send(HttpRequest.newBuilder(uri(path)).GET());
	}

	public Response delete(String sku) {
		return send(HttpRequest.newBuilder(uri("/api/inventory/" + sku)).DELETE());
	}

	private URI uri(String path) {
		return this.base.resolve(path);
	}

	private static Response send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = CLIENT.send(request.timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
			return new Response(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""),
					response.headers().firstValue("Retry-After").orElse(null), response.body());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** A response: status, content type, {@code Retry-After}, and the body as text and as JSON. */
	public record Response(int status, String contentType, String retryAfter, String body) {

		public JsonNode json() {
			return JSON.readTree(this.body);
		}

		public long number(String field) {
			return json().get(field).asLong();
		}

		public String text(String field) {
			JsonNode node = json().get(field);
			return (node != null) ? node.asString() : null;
		}

		@Override
		public String toString() {
			return this.status + " " + this.body;
		}

	}

}
