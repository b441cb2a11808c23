package dev.distlock.sample.inventory.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What an app instance does for the demo that started it, and nothing unless the demo asked: report the port it
 * listens on ({@code inventory.demo.port-file}), and exit when the demo's JVM is gone
 * ({@code inventory.demo.parent-pid}), so that no instance outlives a demo that was killed. {@link DemoInstance} adds
 * it to the application.
 */
@Configuration(proxyBeanMethods = false)
class DemoInstanceSupport {

	private static final Log logger = LogFactory.getLog(DemoInstanceSupport.class);

	@Bean
	@ConditionalOnProperty("inventory.demo.port-file")
	PortFileWriter demoPortFileWriter(@Value("${inventory.demo.port-file}") Path portFile) {
		return new PortFileWriter(portFile);
	}

	@Bean
	@ConditionalOnProperty("inventory.demo.parent-pid")
	ParentWatch demoParentWatch(@Value("${inventory.demo.parent-pid}") long parentPid) {
		Optional<ProcessHandle> parent = ProcessHandle.of(parentPid);
		parent.ifPresentOrElse((handle) -> handle.onExit().thenRun(() -> exit(parentPid)), () -> exit(parentPid));
		return new ParentWatch(parentPid);
	}

	private static void exit(long parentPid) {
		logger.warn("The demo process " + parentPid + " is gone; shutting down");
		// On its own thread: System.exit runs the shutdown hooks (a graceful Spring Boot shutdown) and waits for them.
		Thread exit = new Thread(() -> System.exit(0), "demo-parent-gone");
		exit.setDaemon(false);
		exit.start();
	}

	/** Writes the port to a temp file and moves it in place, so the demo never reads half a number. */
	static final class PortFileWriter implements ApplicationListener<WebServerInitializedEvent> {

		private final Path portFile;

		PortFileWriter(Path portFile) {
			this.portFile = portFile.toAbsolutePath();
		}

		@Override
		public void onApplicationEvent(WebServerInitializedEvent event) {
			try {
				Path temp = Files.createTempFile(this.portFile.getParent(), "port", ".tmp");
				Files.writeString(temp, Integer.toString(event.getWebServer().getPort()), StandardCharsets.UTF_8);
				Files.move(temp, this.portFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot write the port file " + this.portFile, ex);
			}
		}

	}

	/** The demo process this instance belongs to. */
	record ParentWatch(long parentPid) {
	}

}
