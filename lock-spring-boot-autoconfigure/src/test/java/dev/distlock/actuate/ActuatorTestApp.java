package dev.distlock.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import dev.distlock.observability.Catalog;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** A web application with Actuator and an annotated bean, and a small HTTP client for its management endpoints. */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class ActuatorTestApp {

	@Bean
	Catalog catalog() {
		return new Catalog();
	}

	/** An HTTP exchange with the application: the status and the body as JSON (or text). */
	record Response(int status, String body) {

		DocumentContext json() {
			return JsonPath.parse(this.body);
		}

		<T> T read(String path) {
			return json().read(path);
		}

	}

	static final class Client {

		private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

		private final int port;

		Client(int port) {
			this.port = port;
		}

		Response get(String path) throws IOException, InterruptedException {
			return send(HttpRequest.newBuilder(uri(path)).GET());
		}

		/** A GET with headers, given as name, value, name, value, ... */
		Response get(String path, String... headers) throws IOException, InterruptedException {
			return send(HttpRequest.newBuilder(uri(path)).GET().headers(headers));
		}

		Response delete(String path) throws IOException, InterruptedException {
			return send(HttpRequest.newBuilder(uri(path)).DELETE());
		}

		/** A DELETE with headers, given as name, value, name, value, ... */
		Response delete(String path, String... headers) throws IOException, InterruptedException {
			return send(HttpRequest.newBuilder(uri(path)).DELETE().headers(headers));
		}

		private URI uri(String path) {
			return URI.create("http://127.0.0.1:" + this.port + path);
		}

		private Response send(HttpRequest.Builder request) throws IOException, InterruptedException {
			HttpResponse<String> response = this.http.send(request.timeout(Duration.ofSeconds(10)).build(),
					HttpResponse.BodyHandlers.ofString());
			return new Response(response.statusCode(), response.body());
		}

	}

}
