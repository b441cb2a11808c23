package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisServerTest {

	@Test
	void startsOnLoopbackAndAnswersCommands() {
		try (RedisServer redis = RedisServer.start()) {
			assertThat(redis.isRunning()).isTrue();
			assertThat(redis.host()).isEqualTo("127.0.0.1");
			assertThat(redis.port()).isPositive().isNotEqualTo(6379);
			assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
			assertThat(redis.execute("PING")).isEqualTo("PONG");
			assertThat(redis.execute("SET", "k", "välue")).isEqualTo("OK");
			assertThat(redis.execute("GET", "k")).isEqualTo("välue");
			assertThat(redis.execute("GET", "missing")).isNull();
			assertThat(redis.execute("INCR", "n")).isEqualTo(1L);
			assertThat(redis.execute("HSET", "h", "a", "1", "b", "2")).isEqualTo(2L);
			assertThat(redis.execute("HGETALL", "h")).isEqualTo(List.of("a", "1", "b", "2"));
			assertThat(redis.execute("PEXPIRE", "k", "60000")).isEqualTo(1L);
			assertThat((Long) redis.execute("PTTL", "k")).isBetween(1L, 60_000L);
			assertThat(redis.execute("DBSIZE")).isEqualTo(3L);
			assertThat(redis.execute("FLUSHALL")).isEqualTo("OK");
			assertThat(redis.execute("DBSIZE")).isEqualTo(0L);
			assertThat(redis.execute("CONFIG", "GET", "bind")).isEqualTo(List.of("bind", "127.0.0.1"));
			assertThat(redis.execute("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
			assertThat(redis.execute("CONFIG", "GET", "appendonly")).isEqualTo(List.of("appendonly", "no"));
			assertThat((String) redis.execute("INFO", "server"))
					.contains("redis_version:" + redis.version(), "tcp_port:" + redis.port(), "process_id:" + redis.pid());
			assertThat(redis.execute("CLIENT", "KILL", "TYPE", "pubsub")).isEqualTo(0L);
			assertThat(redis.logTail(100)).contains("Ready to accept connections");
			assertThatThrownBy(() -> redis.execute("NOSUCHCOMMAND"))
					.isInstanceOf(RedisErrorException.class)
					.hasMessageStartingWith("ERR");
		}
	}

	@Test
	void twoServersAreIndependent() {
		try (RedisServer one = RedisServer.start(); RedisServer two = RedisServer.start()) {
			assertThat(one.port()).isNotEqualTo(two.port());
			assertThat(one.directory()).isNotEqualTo(two.directory());
			one.execute("SET", "k", "one");
			assertThat(two.execute("GET", "k")).isNull();
			two.execute("SET", "k", "two");
			assertThat(one.execute("GET", "k")).isEqualTo("one");
			one.stop();
			assertThat(two.execute("GET", "k")).isEqualTo("two");
		}
	}

	@Test
	void restartLosesDataAndServesOnTheSamePort() {
		try (RedisServer redis = RedisServer.start()) {
			int port = redis.port();
			long pid = redis.pid();
			redis.execute("SET", "k", "v");

			redis.restart();

			assertThat(redis.port()).isEqualTo(port);
			assertThat(redis.pid()).isNotEqualTo(pid);
			assertThat(redis.execute("DBSIZE")).isEqualTo(0L);
			assertThat(redis.execute("PING")).isEqualTo("PONG");
			assertThat(redis.directory()).isDirectoryNotContaining("glob:**.{rdb,aof}");
		}
	}

	@Test
	void stopRefusesConnectionsIsIdempotentAndRestartable() {
		try (RedisServer redis = RedisServer.start()) {
			long pid = redis.pid();
			redis.execute("SET", "k", "v");
			redis.stop();
			redis.stop();

			assertThat(redis.isRunning()).isFalse();
			assertThat(ProcessHandle.of(pid)).isEmpty();
			assertThatThrownBy(() -> redis.execute("PING"))
					.isInstanceOf(UncheckedIOException.class)
					.hasCauseInstanceOf(ConnectException.class);

			redis.restart();
			assertThat(redis.execute("GET", "k")).isNull();
		}
	}

	@Test
	void killEndsEvenAPausedProcessAtOnceAndKeepsTheDirectory() {
		try (RedisServer redis = RedisServer.start()) {
			long pid = redis.pid();
			redis.pause();
			redis.kill();
			redis.kill();

			assertThat(redis.isRunning()).isFalse();
			assertThat(redis.isPaused()).isFalse();
			assertThat(ProcessHandle.of(pid)).isEmpty();
			assertThat(redis.directory()).isDirectory();
			assertThat(redis.logTail(100)).doesNotContain("shutdown", "SIGTERM");

			redis.restart();
			assertThat(redis.execute("PING")).isEqualTo("PONG");
		}
	}

	@Test
	void sentinelModeReadsItsConfigAndKeepsItsRewritesAcrossRestarts() throws Exception {
		try (RedisServer master = RedisServer.start();
				RedisServer sentinel = RedisServer.builder().sentinel("sentinel monitor m 127.0.0.1 " + master.port() + " 1").start()) {
			assertThat(sentinel.isSentinel()).isTrue();
			assertThat(master.isSentinel()).isFalse();
			assertThat((String) sentinel.execute("INFO", "server")).contains("redis_mode:sentinel");
			assertThat(sentinel.execute("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m")).isEqualTo(List.of("127.0.0.1", Integer.toString(master.port())));
			String myid = (String) sentinel.execute("SENTINEL", "MYID");
			assertThat(sentinel.directory().resolve("sentinel.conf")).content().contains("sentinel myid " + myid);

			sentinel.restart();

			assertThat(sentinel.execute("SENTINEL", "MYID")).isEqualTo(myid);
			assertThat(sentinel.execute("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m")).isEqualTo(List.of("127.0.0.1", Integer.toString(master.port())));
		}
	}

	@Test
	void closeIsIdempotentAndDeletesTheDirectory() {
		RedisServer redis = RedisServer.start();
		long pid = redis.pid();
		redis.close();
		redis.close();

		assertThat(redis.isRunning()).isFalse();
		assertThat(ProcessHandle.of(pid)).isEmpty();
		assertThat(redis.directory()).doesNotExist();
		assertThatThrownBy(redis::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("Closed");
	}

	@Test
	void pausedServerTimesOutAndAnswersAgainAfterResume() {
		try (RedisServer redis = RedisServer.start()) {
			redis.execute("SET", "k", "v");
			redis.pause();
			redis.pause();

			assertThat(redis.isPaused()).isTrue();
			assertThatThrownBy(() -> redis.execute(Duration.ofMillis(300), "GET", "k"))
					.isInstanceOf(UncheckedIOException.class)
					.hasCauseInstanceOf(SocketTimeoutException.class);

			redis.resume();
			assertThat(redis.isPaused()).isFalse();
			assertThat(redis.execute("GET", "k")).isEqualTo("v");
		}
	}

	@Test
	void closeStopsAPausedServer() {
		RedisServer redis = RedisServer.start();
		long pid = redis.pid();
		redis.pause();
		redis.close();

		assertThat(redis.isPaused()).isFalse();
		assertThat(ProcessHandle.of(pid)).isEmpty();
	}

	@Test
	void slowCommandHitsTheSocketTimeout() {
		try (RedisServer redis = RedisServer.start()) {
			assertThatThrownBy(() -> redis.execute(Duration.ofMillis(200), "DEBUG", "SLEEP", "1"))
					.isInstanceOf(UncheckedIOException.class)
					.hasCauseInstanceOf(SocketTimeoutException.class);
			assertThat(redis.execute("PING")).isEqualTo("PONG");
		}
	}

	@Test
	void builderPassesExtraConfig() {
		try (RedisServer redis = RedisServer.builder().config("maxmemory", "10mb").commandTimeout(Duration.ofSeconds(2)).start()) {
			assertThat(redis.execute("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "10485760"));
		}
	}

	@Test
	void failedStartReportsTheLogTail() {
		assertThatThrownBy(() -> RedisServer.builder().config("no-such-directive", "1").start())
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("exited with code")
				.hasMessageContaining("--save \"\"")
				.hasMessageContaining("no-such-directive")
				.hasMessageContaining("Bad directive");
	}

	@Test
	void lostBindRaceMovesOnToAnotherPort() throws Exception {
		try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
			Iterator<Integer> ports = List.of(taken.getLocalPort(), freePort()).iterator();
			try (RedisServer redis = RedisServer.launchNew(RedisServer.builder(), false, ports::next)) {
				assertThat(redis.port()).isNotEqualTo(taken.getLocalPort());
				assertThat(redis.execute("PING")).isEqualTo("PONG");
				assertThat(redis.logTail(100)).contains("Address already in use");
			}
		}
	}

	@Test
	void clusterNodesGetAPortWhoseBusPortIsValid() {
		for (int i = 0; i < 200; i++) {
			assertThat(RedisServer.freeClusterPort()).isBetween(1, 55535);
		}
	}

	@Test
	void clusterNodeWhoseBusPortIsTakenMovesOnToAnotherPort() throws Exception {
		int port;
		ServerSocket bus = null;
		do {
			port = RedisServer.freeClusterPort();
			try {
				bus = new ServerSocket(port + 10000, 1, InetAddress.getByName("127.0.0.1"));
			} catch (IOException raced) {
				// someone took it meanwhile: pick another
			}
		} while (bus == null);
		try (ServerSocket taken = bus) {
			Iterator<Integer> ports = List.of(port, RedisServer.freeClusterPort()).iterator();
			RedisServer.Builder builder = RedisServer.builder().config("cluster-enabled", "yes");
			try (RedisServer redis = RedisServer.launchNew(builder, false, ports::next)) {
				assertThat(redis.port()).isNotEqualTo(port);
				assertThat(redis.execute("CLUSTER", "MYID")).isNotNull();
				assertThat(redis.logTail(100)).contains("Address already in use");
			}
		}
	}

	@Test
	void restartGivesUpWhenThePortStaysTaken() throws Exception {
		try (RedisServer redis = startWithinOneSecond()) {
			redis.stop();
			try (ServerSocket squatter = new ServerSocket(redis.port(), 1, InetAddress.getByName("127.0.0.1"))) {
				assertThatThrownBy(redis::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("still in use");
			}
			// once the port is free it starts; the 1 s start timeout (short, for the refusal above) may be too short for
			// a loaded machine, so a start that did not answer in time is tried again, for 30 s at most (issue 32)
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (true) {
				try {
					redis.restart();
					break;
				}
				catch (IllegalStateException ex) {
					if (System.nanoTime() - deadline > 0) {
						throw ex;
					}
				}
			}
			assertThat(redis.execute("PING")).isEqualTo("PONG");
		}
	}

	/**
	 * A server whose start timeout is 1 s, started again when it did not answer within it on a loaded machine (a
	 * start that times out stops its process), for 30 s at most.
	 */
	private static RedisServer startWithinOneSecond() {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (true) {
			try {
				return RedisServer.builder().startTimeout(Duration.ofSeconds(1)).start();
			}
			catch (IllegalStateException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw ex;
				}
			}
		}
	}

	@Test
	void logFileLivesInThePrivateDirectory() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			assertThat(redis.logFile()).hasParent(redis.directory());
			assertThat(Files.readString(redis.logFile())).contains("Ready to accept connections");
		}
	}

	private static int freePort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
			return socket.getLocalPort();
		}
	}
}
