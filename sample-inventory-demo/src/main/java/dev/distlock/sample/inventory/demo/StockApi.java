package dev.distlock.sample.inventory.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The sample app's stock endpoints as the demo uses them: set a SKU's stock, read its level, delete it. */
final class StockApi {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

	private final HttpClient http;

	private final JsonMapper json = JsonMapper.builder().build();

	StockApi(HttpClient http) {
		this.http = http;
	}

	void setStock(URI instance, String sku, long stock) {
		HttpResponse<String> response = send(HttpRequest.newBuilder(skuUri(instance, sku))
			.header("Content-Type", "application/json")
			.PUT(HttpRequest.BodyPublishers.ofString("{\"stock\": " + stock + "}")));
		if (response.statusCode() != 200) {
			throw new IllegalStateException("Setting the stock of " + sku + " failed: " + response.statusCode() + " "
					+ response.body());
		}
	}

	JsonNode level(URI instance, String sku) {
		HttpResponse<String> response = send(HttpRequest.newBuilder(skuUri(instance, sku)).GET());
		if (response.statusCode() != 200) {
			throw new IllegalStateException("Reading " + sku + " failed: " + response.statusCode() + " " + response.body());
		}
		return this.json.readTree(response.body());
	}

	void delete(URI instance, String sku) {
		send(HttpRequest.newBuilder(skuUri(instance, sku)).DELETE());
	}

	private HttpResponse<String> send(HttpRequest.Builder request) {
		try {
			return this.http.send(request.timeout(REQUEST_TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex.toString(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	private static URI skuUri(URI instance, String sku) {
		return instance.resolve("/api/inventory/" + sku);
	}

}
