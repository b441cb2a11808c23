package dev.distlock.test.redis;

import static dev.distlock.test.redis.RespConnection.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Drives a real redis-server through the proxy on long-lived connections. Short fixed waits appear
 * only where the claim is that nothing arrives within a window.
 */
@ExtendWith(RedisServerExtension.class)
class FaultProxyTest {

	/** How long "no reply" is watched for. */
	private static final Duration SILENCE = Duration.ofMillis(300);

	private final RedisServer redis;

	FaultProxyTest(RedisServer redis) {
		this.redis = redis;
	}

	@BeforeEach
	void flush() {
		redis.execute("FLUSHALL");
	}

	@Test
	void healedProxyForwardsBothWaysAndCountsBytes() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			assertThat(proxy.host()).isEqualTo("127.0.0.1");
			assertThat(proxy.port()).isPositive().isNotEqualTo(redis.port()).isNotEqualTo(6379);
			assertThat(proxy.uri()).isEqualTo("redis://127.0.0.1:" + proxy.port());

			assertThat(conn.call("PING")).isEqualTo("PONG");
			assertThat(proxy.bytesToServer()).isEqualTo("*1\r\n$4\r\nPING\r\n".length());
			// the proxy counts a write after the kernel took it, so the client may read the reply first
			await().atMost(TIMEOUT).until(() -> proxy.bytesToClient() == "+PONG\r\n".length());
			assertThat(conn.call("SET", "k", "v")).isEqualTo("OK");
			assertThat(conn.call("GET", "k")).isEqualTo("v");
			assertThat(redis.execute("GET", "k")).isEqualTo("v");

			assertThat(Resp.execute(proxy.host(), proxy.port(), TIMEOUT, "GET", "k")).isEqualTo("v");
			assertThat(proxy.acceptedCount()).isEqualTo(2);
			await().atMost(TIMEOUT).until(() -> proxy.connectionCount() == 1); // the client's close went through both ways
			assertThat(proxy.bytesDropped()).isZero();
			assertThat(proxy.toString()).contains("heal()", "1 open");
		}
	}

	@Test
	void latencyDelaysBothDirectionsOfOpenAndNewConnectionsInOrder() throws Exception {
		Duration latency = Duration.ofMillis(150);
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			proxy.latency(latency);

			long start = System.nanoTime();
			assertThat(conn.call("PING")).isEqualTo("PONG");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(latency.multipliedBy(2));

			for (int i = 0; i < 5; i++) {
				conn.send("INCR", "n");
			}
			for (long i = 1; i <= 5; i++) {
				assertThat(conn.read(TIMEOUT)).isEqualTo(i);
			}

			start = System.nanoTime();
			assertThat(Resp.execute(proxy.host(), proxy.port(), TIMEOUT, "PING")).isEqualTo("PONG");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(latency.multipliedBy(2));

			proxy.heal();
			assertThat(conn.call("GET", "n")).isEqualTo("5");
			assertThat(proxy.bytesDropped()).isZero();
		}
	}

	@Test
	void blackholeHoldsACommandThatRunsOnlyAfterHeal() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			proxy.blackhole();
			long sent = proxy.bytesToServer();

			conn.send("SET", "held", "1");
			assertThatThrownBy(() -> conn.read(SILENCE)).isInstanceOf(SocketTimeoutException.class);
			assertThat(redis.execute("GET", "held")).isNull(); // asked the server directly: it never saw the command
			assertThat(proxy.bytesToServer()).isEqualTo(sent);

			try (RespConnection late = RespConnection.open(proxy)) {
				late.send("PING");
				assertThatThrownBy(() -> late.read(SILENCE)).isInstanceOf(SocketTimeoutException.class);
				await().atMost(TIMEOUT).until(() -> proxy.connectionCount() == 2);

				proxy.heal();

				assertThat(conn.read(TIMEOUT)).isEqualTo("OK");
				assertThat(redis.execute("GET", "held")).isEqualTo("1");
				assertThat(late.read(TIMEOUT)).isEqualTo("PONG");
				assertThat(conn.call("GET", "held")).isEqualTo("1");
			}
			assertThat(proxy.bytesDropped()).isZero();
		}
	}

	@Test
	void blackholeHoldsRepliesTheServerAlreadySent() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			conn.send("BLPOP", "queue", "5");
			await().atMost(TIMEOUT).until(() -> String.valueOf(redis.execute("INFO", "clients")).contains("blocked_clients:1\r\n"));
			proxy.blackhole();

			assertThat(redis.execute("RPUSH", "queue", "job")).isEqualTo(1L); // the server answers the blocked client at once
			assertThat(redis.execute("LLEN", "queue")).isEqualTo(0L);
			assertThatThrownBy(() -> conn.read(SILENCE)).isInstanceOf(SocketTimeoutException.class);

			proxy.heal();
			assertThat(conn.read(TIMEOUT)).isEqualTo(List.of("queue", "job"));
		}
	}

	@Test
	void aValueLargerThanWhatTheProxyHoldsCrossesAPartitionIntact() throws Exception {
		String big = "0123456789abcdef".repeat(256 * 1024); // 4 MiB: more than the proxy holds, so backpressure
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			long sent = proxy.bytesToServer();
			proxy.blackhole();
			// a blocked socket write has no timeout, so it runs on its own thread, bounded by get() below
			CompletableFuture<Void> send = CompletableFuture.runAsync(() -> {
				try {
					conn.send("SET", "big", big);
				} catch (IOException e) {
					throw new UncheckedIOException(e);
				}
			});
			assertThatThrownBy(() -> conn.read(SILENCE)).isInstanceOf(SocketTimeoutException.class);
			assertThat(redis.execute("EXISTS", "big")).isEqualTo(0L);
			assertThat(proxy.bytesToServer()).isEqualTo(sent);

			proxy.heal();

			send.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			assertThat(conn.read(TIMEOUT)).isEqualTo("OK");
			assertThat(redis.execute("STRLEN", "big")).isEqualTo((long) big.length());
			assertThat(conn.call("GET", "big")).isEqualTo(big);
			assertThat(proxy.bytesDropped()).isZero();
		}
	}

	@Test
	void dropRepliesRunsCommandsTheClientNeverHearsOfThenResetsThatConnection() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis);
				RespConnection conn = RespConnection.open(proxy);
				RespConnection idle = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			assertThat(idle.call("PING")).isEqualTo("PONG");
			proxy.dropReplies();

			conn.send("SET", "lost", "1");
			conn.send("INCR", "counter");
			await().atMost(TIMEOUT).until(() -> "1".equals(redis.execute("GET", "counter")));
			assertThat(redis.execute("GET", "lost")).isEqualTo("1");
			await().atMost(TIMEOUT).until(() -> proxy.bytesDropped() == "+OK\r\n:1\r\n".length());
			assertThatThrownBy(() -> conn.read(SILENCE)).isInstanceOf(SocketTimeoutException.class);

			proxy.heal();

			assertThat(proxy.connectionCount()).isEqualTo(1);
			assertThatThrownBy(() -> conn.read(TIMEOUT)).isInstanceOf(SocketException.class).hasMessageContaining("reset");
			assertThat(idle.call("PING")).isEqualTo("PONG"); // it lost nothing, so it carries on
			try (RespConnection fresh = RespConnection.open(proxy)) {
				assertThat(fresh.call("GET", "lost")).isEqualTo("1");
			}
		}
	}

	@Test
	void aConnectionThatLostRepliesStaysSilentThroughAPartitionAndIsResetAtHeal() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			proxy.dropReplies();
			conn.send("SET", "lost", "1");
			await().atMost(TIMEOUT).until(() -> proxy.bytesDropped() > 0);

			proxy.blackhole();
			conn.send("GET", "lost");
			proxy.latency(Duration.ofMillis(1));

			assertThat(proxy.connectionCount()).isZero();
			assertThatThrownBy(() -> conn.read(TIMEOUT)).isInstanceOf(SocketException.class).hasMessageContaining("reset");
		}
	}

	@Test
	void resetAllBreaksOpenConnectionsAndKeepsTheMode() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis);
				RespConnection one = RespConnection.open(proxy);
				RespConnection two = RespConnection.open(proxy)) {
			assertThat(one.call("PING")).isEqualTo("PONG");
			assertThat(two.call("PING")).isEqualTo("PONG");
			Duration latency = Duration.ofMillis(100);
			proxy.latency(latency);

			proxy.resetAll();

			assertThat(proxy.connectionCount()).isZero();
			for (RespConnection broken : List.of(one, two)) {
				assertThatThrownBy(() -> broken.call("PING")).isInstanceOf(SocketException.class);
			}
			long start = System.nanoTime();
			try (RespConnection fresh = RespConnection.open(proxy)) {
				assertThat(fresh.call("PING")).isEqualTo("PONG");
			}
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(latency.multipliedBy(2));
			assertThat(proxy.acceptedCount()).isEqualTo(3);
		}
	}

	@Test
	void refuseNewResetsNewConnectionsOnly() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(redis); RespConnection conn = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			proxy.refuseNew(true);

			assertThatThrownBy(() -> Resp.execute(proxy.host(), proxy.port(), TIMEOUT, "PING")).isInstanceOf(SocketException.class);
			assertThat(conn.call("PING")).isEqualTo("PONG");
			assertThat(proxy.acceptedCount()).isEqualTo(2);
			assertThat(proxy.connectionCount()).isEqualTo(1);

			proxy.refuseNew(false);
			assertThat(Resp.execute(proxy.host(), proxy.port(), TIMEOUT, "PING")).isEqualTo("PONG");
		}
	}

	@Test
	void aTargetThatRefusesConnectionsResetsTheClient() throws Exception {
		try (Socket notListening = new Socket()) {
			notListening.bind(new InetSocketAddress("127.0.0.1", 0)); // holds a port nobody listens on
			try (FaultProxy proxy = FaultProxy.start("127.0.0.1", notListening.getLocalPort())) {
				assertThatThrownBy(() -> Resp.execute(proxy.host(), proxy.port(), TIMEOUT, "PING")).isInstanceOf(SocketException.class);
				assertThat(proxy.connectionCount()).isZero();
			}
		}
	}

	@Test
	void closeResetsConnectionsReleasesThePortAndStopsTheThread() throws Exception {
		FaultProxy proxy = FaultProxy.to(redis);
		try (RespConnection conn = RespConnection.open(proxy)) {
			assertThat(conn.call("PING")).isEqualTo("PONG");
			assertThat(proxyThreads()).singleElement().satisfies(thread -> {
				assertThat(thread.getName()).isEqualTo("fault-proxy-" + proxy.port());
				assertThat(thread.isDaemon()).isTrue();
			});
			proxy.blackhole();
			conn.send("SET", "k", "v");

			proxy.close();
			proxy.close();

			await().atMost(TIMEOUT).until(() -> proxyThreads().isEmpty());
			assertThat(proxy.connectionCount()).isZero();
			assertThatThrownBy(() -> conn.read(TIMEOUT)).isInstanceOf(SocketException.class);
			assertThat(redis.execute("GET", "k")).isNull();
			try (ServerSocket socket = new ServerSocket()) {
				socket.setReuseAddress(false);
				socket.bind(new InetSocketAddress("127.0.0.1", proxy.port()));
			}
			assertThatThrownBy(proxy::heal).isInstanceOf(IllegalStateException.class).hasMessageContaining("Closed");
			assertThat(proxy.toString()).contains("closed");
		}
	}

	private static Set<Thread> proxyThreads() {
		return Thread.getAllStackTraces().keySet().stream()
				.filter(thread -> thread.isAlive() && thread.getName().startsWith("fault-proxy-"))
				.collect(Collectors.toSet());
	}
}
