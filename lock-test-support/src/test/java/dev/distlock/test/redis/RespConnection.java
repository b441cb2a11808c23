package dev.distlock.test.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One RESP connection that stays open, so a test can send a command, let a read time out, change
 * the network and read the same reply later: what {@link Resp#execute} (a connection per command)
 * cannot show.
 */
final class RespConnection implements AutoCloseable {

	static final Duration TIMEOUT = Duration.ofSeconds(5);

	private final Socket socket;
	private final OutputStream out;
	private final InputStream in;

	private RespConnection(Socket socket) throws IOException {
		this.socket = socket;
		this.out = new BufferedOutputStream(socket.getOutputStream());
		this.in = new BufferedInputStream(socket.getInputStream());
	}

	static RespConnection open(String host, int port) throws IOException {
		Socket socket = new Socket();
		try {
			socket.setTcpNoDelay(true);
			socket.connect(new InetSocketAddress(host, port), (int) TIMEOUT.toMillis());
			return new RespConnection(socket);
		} catch (IOException | RuntimeException e) {
			socket.close();
			throw e;
		}
	}

	static RespConnection open(FaultProxy proxy) throws IOException {
		return open(proxy.host(), proxy.port());
	}

	/** Sends a command without waiting for its reply. */
	void send(String... command) throws IOException {
		Resp.write(out, command);
		out.flush();
	}

	/**
	 * Reads the next reply, waiting at most {@code timeout} for each read from the socket.
	 *
	 * @throws java.net.SocketTimeoutException if nothing arrived in time; a reply that had not
	 *     started arriving can still be read later
	 */
	@Nullable Object read(Duration timeout) throws IOException {
		socket.setSoTimeout((int) Math.max(1, timeout.toMillis()));
		return Resp.read(in);
	}

	/** Sends a command and reads its reply within {@link #TIMEOUT}. */
	@Nullable Object call(String... command) throws IOException {
		send(command);
		return read(TIMEOUT);
	}

	@Override
	public void close() throws IOException {
		socket.close();
	}
}
