package dev.distlock.interceptor;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import dev.distlock.interceptor.DistributedLockInterceptorIntegrationTests.LockEvents;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The README's annotation example, exactly as a reader would paste it: it compiles on its own and, in a real context
 * with a real Redis and an embedded database, sells under the lock and writes the lease's fencing token. Every other
 * Java snippet of the documentation is compiled, not run, by {@code DocumentationSnippetsTests}.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadmeExampleIntegrationTests {

	private static final String INTRODUCTION = "Annotate the method that must not run twice at once for the same key";

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void theAnnotationExampleCompilesAsPastedAndSellsUnderTheLock(@TempDir Path directory) throws Exception {
		Path source = directory.resolve("InventoryService.java");
		Files.writeString(source, annotationExample());
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
		// -parameters as Spring Boot's build plugins set it; the test classpath stands for the application's
		int status = compiler.run(null, diagnostics, diagnostics, "-parameters", "-proc:none", "-d", directory.toString(),
				"-classpath", System.getProperty("java.class.path"), source.toString());
		assertThat(status).as("the README example compiles:%n%s", diagnostics.toString(StandardCharsets.UTF_8)).isZero();

		LockEvents events = new LockEvents("InventoryService.purchase");
		try (URLClassLoader loader = new URLClassLoader(new URL[] { directory.toUri().toURL() },
				getClass().getClassLoader())) {
			@SuppressWarnings("unchecked")
			Class<Object> serviceClass = (Class<Object>) loader.loadClass("InventoryService");
			DistributedLockInterceptorIntegrationTests.runner(redis)
				.withClassLoader(loader)
				.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
						DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
						TransactionAutoConfiguration.class))
				.withPropertyValues("spring.datasource.url=jdbc:h2:mem:readme;DB_CLOSE_DELAY=-1",
						"spring.datasource.generate-unique-name=false")
				.withBean(LockEvents.class, () -> events)
				.withBean(serviceClass)
				.run(context -> {
					assertThat(context).hasNotFailed();
					JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
					jdbc.execute("create table stock (sku varchar primary key, quantity int not null, fence bigint not null)");
					jdbc.update("insert into stock values ('sku-42', 3, 0)");
					Object service = context.getBean(serviceClass);
					Method purchase = service.getClass().getMethod("purchase", String.class, int.class);

					assertThat(purchase.invoke(service, "sku-42", 2)).isEqualTo(1);
					assertThat(jdbc.queryForObject("select quantity from stock where sku = 'sku-42'", Integer.class)).isEqualTo(1);
					assertThat(jdbc.queryForObject("select fence from stock where sku = 'sku-42'", Long.class)).isPositive();
					assertThat(events.drain()).containsExactly("acquire sku:sku-42", "release sku:sku-42");

					assertThatExceptionOfType(InvocationTargetException.class).isThrownBy(() -> purchase.invoke(service, "sku-42", 2))
						.havingCause().isInstanceOf(IllegalStateException.class).withMessage("only 1 of sku-42 left");
					assertThat(jdbc.queryForObject("select quantity from stock where sku = 'sku-42'", Integer.class)).isEqualTo(1);
				});
		}
	}

	/** The first Java block after the README's introduction of the annotation. */
	private static String annotationExample() throws IOException {
		String readme = Files.readString(Path.of("..", "README.md"));
		int introduction = readme.indexOf(INTRODUCTION);
		assertThat(introduction).as("README introduces the annotation with \"%s\"", INTRODUCTION).isNotNegative();
		int start = readme.indexOf("```java\n", introduction) + "```java\n".length();
		return readme.substring(start, readme.indexOf("```", start));
	}

}
