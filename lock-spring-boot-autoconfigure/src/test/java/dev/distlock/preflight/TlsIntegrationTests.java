package dev.distlock.preflight;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.LockPreflightAutoConfiguration;
import dev.distlock.autoconfigure.LockPreflightFailureAnalyzer;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockService;
import dev.distlock.preflight.PreflightReport.Outcome;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * TLS and mutual TLS through Boot's SSL bundles ({@code spring.data.redis.ssl.bundle}) against a real redis-server
 * listening with TLS, with certificates made for the test by {@code openssl}: a Boot application locks and unlocks,
 * and the preflight fails the start with a TLS failure when the bundle trusts the wrong CA or lacks the client
 * certificate a server with {@code tls-auth-clients yes} asks for. Skipped, saying why, without {@code openssl} or
 * without a redis-server built with TLS.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsIntegrationTests {

	private static TlsFiles tls;

	private static RedisServer serverTls;

	private static int serverTlsPort;

	private static RedisServer mutualTls;

	private static int mutualTlsPort;

	@BeforeAll
	static void start() {
		assumeThat(TlsFiles.opensslAvailable()).as("openssl is not on PATH: no certificates for the TLS tests").isTrue();
		tls = TlsFiles.get();
		assumeThat(TlsFiles.redisSupportsTls()).as("this redis-server was built without TLS (it refuses --tls-port)")
			.isTrue();
		serverTlsPort = TlsFiles.freePort();
		serverTls = tls.tlsServer(RedisServer.builder(), serverTlsPort, false).start();
		mutualTlsPort = TlsFiles.freePort();
		mutualTls = tls.tlsServer(RedisServer.builder(), mutualTlsPort, true).start();
	}

	@AfterAll
	static void stop() {
		if (serverTls != null) {
			serverTls.close();
		}
		if (mutualTls != null) {
			mutualTls.close();
		}
	}

	/** A Boot application on the TLS port of a server, with an SSL bundle named "redis" (to be configured). */
	private static ApplicationContextRunner runner(int tlsPort) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class, LockPreflightAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tlsPort,
					"spring.data.redis.ssl.bundle=redis", "spring.data.redis.timeout=5s", "distlock.preflight.timeout=30s");
	}

	private static String trusting(Path ca) {
		return "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + ca;
	}

	private static void locksAndUnlocks(AssertableApplicationContext context, RedisServer server) {
		assertThat(context).hasNotFailed();
		assertThat(context.getBean(LockPreflightRunner.class).getReport().outcome()).isEqualTo(Outcome.PASSED);
		LockService locks = context.getBean(LockService.class);
		try (Lease lease = locks.acquire("over-tls", Duration.ofSeconds(10), Duration.ZERO)) {
			// the harness reads the same data on the server's plain port
			assertThat(server.execute("HGET", "lock:{over-tls}", lease.owner())).isEqualTo("1");
		}
		assertThat(server.execute("EXISTS", "lock:{over-tls}")).isEqualTo(0L);
	}

	private static PreflightReport failedPreflight(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
			if (t instanceof LockPreflightException preflight) {
				return preflight.getReport();
			}
		}
		throw new AssertionError("No LockPreflightException in " + context.getStartupFailure());
	}

	@Test
	void anApplicationLocksOverTls() {
		runner(serverTlsPort).withPropertyValues(trusting(tls.caCertificate))
			.run(context -> locksAndUnlocks(context, serverTls));
	}

	@Test
	void anApplicationLocksOverMutualTls() {
		runner(mutualTlsPort)
			.withPropertyValues(trusting(tls.caCertificate),
					"spring.ssl.bundle.pem.redis.keystore.certificate=file:" + tls.clientCertificate,
					"spring.ssl.bundle.pem.redis.keystore.private-key=file:" + tls.clientKey)
			.run(context -> locksAndUnlocks(context, mutualTls));
	}

	@Test
	void aBundleTrustingAnotherCaFailsTheStartAsTls() {
		runner(serverTlsPort).withPropertyValues(trusting(tls.otherCaCertificate)).run(context -> {
			PreflightReport report = failedPreflight(context);
			assertThat(report.findings()).singleElement().satisfies(finding -> {
				assertThat(finding.error().kind()).isEqualTo(RedisErrorKind.TLS);
				assertThat(finding.error().message()).startsWith("PKIX path building failed");
			});
			FailureAnalysis analysis = new LockPreflightFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis.getDescription())
				.startsWith("The TLS handshake with Redis at 127.0.0.1:" + serverTlsPort + " as user 'default' failed.")
				.contains("PKIX path building failed");
			assertThat(analysis.getAction()).startsWith("Give spring.data.redis.ssl.bundle an SSL bundle")
				.contains("holds the CA that signed the server's certificate");
		});
	}

	@Test
	void aLockCallOverAFailingHandshakeSaysTlsNotThatRedisDidNotAnswer() {
		// the application starts all the same (warn mode): its lock calls then fail as what they are
		runner(serverTlsPort).withPropertyValues(trusting(tls.otherCaCertificate), "distlock.preflight.mode=warn")
			.run(context -> {
				assertThat(context).hasNotFailed();
				LockService locks = context.getBean(LockService.class);
				long start = System.nanoTime();
				LockAccessDeniedException denied = catchThrowableOfType(LockAccessDeniedException.class,
						() -> locks.acquire("over-tls", Duration.ofSeconds(10), Duration.ofSeconds(30)));
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not retried within the wait")
					.isLessThan(Duration.ofSeconds(15));
				assertThat(denied.getReason()).isEqualTo(LockAccessDeniedException.Reason.TLS);
				assertThat(denied).hasMessageStartingWith("Could not acquire lock 'over-tls': the TLS handshake with "
						+ "Redis failed; give spring.data.redis.ssl.bundle a trust store with the server's CA")
					.hasMessageContaining("PKIX path building failed")
					.hasMessageNotContaining("did not answer");
			});
	}

	@Test
	void noClientCertificateForAServerThatAsksForOneFailsTheStartAsTls() {
		runner(mutualTlsPort).withPropertyValues(trusting(tls.caCertificate)).run(context -> {
			PreflightReport report = failedPreflight(context);
			assertThat(report.findings()).singleElement().satisfies(finding -> {
				assertThat(finding.error().kind()).isEqualTo(RedisErrorKind.TLS);
				assertThat(finding.error().message()).isEqualTo("Received fatal alert: certificate_required");
			});
		});
	}

}
