package dev.distlock.test.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Minimal RESP2 client over a plain socket, so the harness needs no Redis client library. */
final class Resp {

	private Resp() {
	}

	/** Sends one command on a fresh connection and returns the decoded reply. */
	static @Nullable Object execute(String host, int port, Duration timeout, String... command) throws IOException {
		if (command.length == 0) {
			throw new IllegalArgumentException("No command given");
		}
		int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
		try (Socket socket = new Socket()) {
			socket.setSoTimeout(millis);
			socket.setTcpNoDelay(true);
			socket.connect(new InetSocketAddress(host, port), millis);
			OutputStream out = new BufferedOutputStream(socket.getOutputStream());
			write(out, command);
			out.flush();
			return read(new BufferedInputStream(socket.getInputStream()));
		}
	}

	/** Encodes one command as a RESP array of bulk strings; the caller flushes. */
	static void write(OutputStream out, String... command) throws IOException {
		out.write(("*" + command.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
		for (String part : command) {
			byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
			out.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
			out.write(bytes);
			out.write('\r');
			out.write('\n');
		}
	}

	/** Decodes one reply, as described in {@link RedisServer#execute(String...)}. */
	static @Nullable Object read(InputStream in) throws IOException {
		int type = in.read();
		if (type < 0) {
			throw new EOFException("Connection closed by server");
		}
		String line = line(in);
		switch (type) {
			case '+':
				return line;
			case '-':
				throw new RedisErrorException(line);
			case ':':
				return Long.parseLong(line);
			case '$': {
				int length = Integer.parseInt(line);
				if (length < 0) {
					return null;
				}
				byte[] bytes = in.readNBytes(length);
				if (bytes.length < length || in.read() != '\r' || in.read() != '\n') {
					throw new EOFException("Truncated bulk string");
				}
				return new String(bytes, StandardCharsets.UTF_8);
			}
			case '*': {
				int count = Integer.parseInt(line);
				if (count < 0) {
					return null;
				}
				List<@Nullable Object> items = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					try {
						items.add(read(in));
					} catch (RedisErrorException e) {
						items.add(e); // e.g. a failed command inside EXEC: keep reading the rest of the array
					}
				}
				return items;
			}
			default:
				throw new IOException("Unexpected RESP type byte '" + (char) type + "'");
		}
	}

	private static String line(InputStream in) throws IOException {
		ByteArrayOutputStream buffer = new ByteArrayOutputStream();
		int previous = -1;
		for (int b = in.read(); b >= 0; b = in.read()) {
			if (previous == '\r' && b == '\n') {
				byte[] bytes = buffer.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			buffer.write(b);
			previous = b;
		}
		throw new EOFException("Connection closed mid-reply");
	}
}
