package dev.distlock.sample.inventory.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.distlock.sample.inventory.demo.DemoOptions.RedisAddress;
import dev.distlock.test.redis.RedisServer;
import org.jspecify.annotations.Nullable;

/** The demo's Redis servers as its header tells of them, and the check of a server given with {@code --redis}. */
final class DemoRedis {

	private DemoRedis() {
	}

	/** Fail fast, rather than let the instances wait for a Redis that is not there until the start timeout. */
	static void ping(RedisAddress redis) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(redis.host(), redis.port()), 5000);
			socket.setSoTimeout(5000);
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			String reply = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
				.readLine();
			if (!"+PONG".equals(reply)) {
				throw new IllegalStateException("Redis at " + redis + " answered PING with '" + reply
						+ "' (the demo does not pass a password)");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("No Redis answers at " + redis + ": " + ex.getMessage(), ex);
		}
	}

	/** The store's Redis: the private server started for the run, or the one given with {@code --redis}. */
	static String describe(RedisAddress redis, @Nullable RedisServer server, String runId) {
		if (server != null) {
			String binary = switch (server.binary().source()) {
				case PATH -> "from PATH";
				case EMBEDDED -> "shipped in the embedded-redis jar";
				case EXPLICIT -> "at " + server.binary().path();
			};
			return redis + ", a private redis-server " + server.version() + " (" + binary + ", pid " + server.pid()
					+ ") started for this run";
		}
		return redis + " (given with --redis; the demo writes only keys of SKUs named demo-" + runId
				+ "-*, and deletes them afterwards)";
	}

	/** The Redlock row's independent masters. */
	static String describeRedlock(List<RedisServer> servers) {
		RedisServer first = servers.get(0);
		return servers.size() + " more private redis-server " + first.version() + " processes, independent "
				+ "masters started for this run: " + String.join(", ", servers.stream()
					.map((server) -> new RedisAddress(server.host(), server.port()) + " (pid " + server.pid() + ")")
					.toList());
	}

}
