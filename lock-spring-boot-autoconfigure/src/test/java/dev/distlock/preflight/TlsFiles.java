package dev.distlock.preflight;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.test.redis.RedisServer;

/**
 * Certificates for TLS tests, made with the {@code openssl} command: a CA, a server certificate it signed for
 * 127.0.0.1, a client certificate it signed (for mutual TLS), and an unrelated CA that signed nothing of the server's.
 * Keys are EC P-256 in PKCS#8 PEM, which both redis-server and Boot's PEM SSL bundles read. Made once per JVM.
 */
final class TlsFiles {

	private static final long COMMAND_TIMEOUT_SECONDS = 30;

	private static TlsFiles instance;

	private static Boolean tlsSupported;

	final Path directory;

	final Path caCertificate;

	final Path serverCertificate;

	final Path serverKey;

	final Path clientCertificate;

	final Path clientKey;

	final Path otherCaCertificate;

	private TlsFiles(Path directory) {
		this.directory = directory;
		this.caCertificate = directory.resolve("ca.crt");
		this.serverCertificate = directory.resolve("server.crt");
		this.serverKey = directory.resolve("server.key");
		this.clientCertificate = directory.resolve("client.crt");
		this.clientKey = directory.resolve("client.key");
		this.otherCaCertificate = directory.resolve("other-ca.crt");
	}

	/** Whether an {@code openssl} command can be run; the TLS tests are skipped without one. */
	static boolean opensslAvailable() {
		try {
			return run(Path.of(System.getProperty("java.io.tmpdir")), "openssl", "version") == 0;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Whether the redis-server binary was built with TLS: a build without it refuses the {@code tls-*} directives and
	 * exits at once, one with it starts listening with TLS too (and is stopped again).
	 */
	static synchronized boolean redisSupportsTls() {
		if (tlsSupported == null) {
			try (RedisServer server = get().tlsServer(RedisServer.builder(), freePort(), false).start()) {
				tlsSupported = server.isRunning();
			}
			catch (RuntimeException ex) {
				tlsSupported = false;
			}
		}
		return tlsSupported;
	}

	/** A port of 127.0.0.1 that was free a moment ago. */
	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(RedisServer.HOST))) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static synchronized TlsFiles get() {
		if (instance == null) {
			try {
				Path directory = Files.createTempDirectory("distlock-tls-");
				directory.toFile().deleteOnExit();
				TlsFiles files = new TlsFiles(directory);
				files.create();
				instance = files;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return instance;
	}

	private void create() throws IOException {
		ca("ca");
		ca("other-ca");
		Files.writeString(this.directory.resolve("leaf.ext"),
				"subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n",
				StandardCharsets.UTF_8);
		leaf("server", "localhost");
		leaf("client", "distlock-test-client");
		for (Path file : List.of(this.caCertificate, this.serverCertificate, this.serverKey, this.clientCertificate,
				this.clientKey, this.otherCaCertificate)) {
			file.toFile().deleteOnExit();
		}
	}

	private void ca(String name) throws IOException {
		openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
				name + ".key", "-out", name + ".crt", "-days", "2", "-subj", "/CN=distlock test " + name,
				"-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
	}

	private void leaf(String name, String commonName) throws IOException {
		openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", name + ".key",
				"-out", name + ".csr", "-subj", "/CN=" + commonName);
		openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
				name + ".crt", "-days", "2", "-extfile", "leaf.ext");
	}

	private void openssl(String... args) throws IOException {
		List<String> command = new ArrayList<>();
		command.add("openssl");
		command.addAll(List.of(args));
		int exit = run(this.directory, command.toArray(new String[0]));
		if (exit != 0) {
			throw new IllegalStateException(String.join(" ", command) + " exited with " + exit + ": "
					+ Files.readString(this.directory.resolve("openssl.log")));
		}
	}

	private static int run(Path directory, String... command) throws IOException {
		Process process = new ProcessBuilder(command).directory(directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(Redirect.appendTo(directory.resolve("openssl.log").toFile()))
			.start();
		try {
			if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				throw new IOException(String.join(" ", command) + " did not finish within " + COMMAND_TIMEOUT_SECONDS + " s");
			}
			return process.exitValue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while running " + String.join(" ", command), ex);
		}
	}

	/** Config of a redis-server that also listens with TLS on {@code tlsPort}. */
	RedisServer.Builder tlsServer(RedisServer.Builder builder, int tlsPort, boolean authClients) {
		return builder.config("tls-port", Integer.toString(tlsPort))
			.config("tls-cert-file", this.serverCertificate.toString())
			.config("tls-key-file", this.serverKey.toString())
			.config("tls-ca-cert-file", this.caCertificate.toString())
			.config("tls-auth-clients", authClients ? "yes" : "no");
	}

}
